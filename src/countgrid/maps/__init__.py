"""The interactive offline map of a counting grid: one self-contained HTML file
(docs/map.md).  :func:`write_html` writes it; :func:`map_data` returns the arrays it
embeds, so that what the page shows can be compared with Python."""
from countgrid.maps._data import SEARCH_FRACTION, map_data, rank_documents, search_cells
from countgrid.maps._html import write_html

__all__ = ["write_html", "map_data", "rank_documents", "search_cells", "SEARCH_FRACTION"]
