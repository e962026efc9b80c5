"""HTML report: results/ -> reports/ (aggregate, then render)."""
