"""A live dashboard of a run in the browser (``bin/run dashboard``): a read-only bus subscriber and log reader
(source.py) feeding plain state (state.py), shown by Bokeh's server (page.py, server.py)."""
