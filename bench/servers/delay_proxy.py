"""A TCP proxy that holds every HTTP request for a fixed delay before passing it on: S3's per-request latency on a
loopback server (this kernel has no netem, see shared/DESIGN.md "Object store here").

A request is recognised by its first bytes (an HTTP method at the start of what the client sends, on a new or a
kept-alive connection); bodies and responses pass without delay. It runs in a thread of the run's own process,
so it needs no daemon handling and ends with the run.
"""

from __future__ import annotations

import asyncio
import threading

METHODS = (b"GET ", b"PUT ", b"POST ", b"HEAD ", b"DELETE ", b"OPTIONS ", b"PATCH ")


class DelayProxy:
    def __init__(self, target_port: int, delay_s: float) -> None:
        self.target_port, self.delay_s = target_port, delay_s
        self.port = 0
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cowmor-delay-proxy", daemon=True)

    def start(self) -> DelayProxy:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the delaying proxy did not start")
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(self._pipe(client_r, server_w, delay=True), self._pipe(server_r, client_w, delay=False),
                             return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: bool) -> None:
        try:
            while chunk := await reader.read(1 << 16):
                if delay and chunk.startswith(METHODS):
                    self.requests += 1
                    await asyncio.sleep(self.delay_s)
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            try:
                writer.close()
            except RuntimeError:
                pass
