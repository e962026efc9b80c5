"""The report's sections, one module each: a section takes the loaded run (and tidy frames) and returns HTML."""
