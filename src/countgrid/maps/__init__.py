"""The interactive offline map of a counting grid: one self-contained HTML file
(docs/map.md).  :func:`write_html` writes it; :func:`map_data` returns the arrays it
embeds, so that what the page shows can be compared with Python; :func:`widget` shows it
in a notebook with two-way selection (the ``notebook`` extra).  The corpus may come
from anyone: its texts are cut (:func:`truncate_text`, ``MAX_*_CHARS``) and its links
checked (:func:`safe_link`) at write time.

Importing this package registers the functions that ``CountingGrid.to_html`` and
``CountingGrid._repr_html_`` draw with (countgrid.grid._display): the map layer sits above
the models, which import nothing from it."""
from countgrid.maps._data import (MAX_ID_CHARS, MAX_LABEL_CHARS, MAX_LINK_CHARS,
                                  MAX_NAME_CHARS, MAX_SNIPPET_CHARS, MAX_TITLE_CHARS,
                                  MAX_WORD_CHARS, SEARCH_FRACTION, map_data, rank_documents,
                                  safe_link, search_cells, truncate_text)
from countgrid.grid._display import register_map
from countgrid.maps._annotations import read_annotations
from countgrid.maps._bundle import write_bundle
from countgrid.maps._features import feature_shares
from countgrid.maps._html import grid_to_html, write_html
from countgrid.maps._preview import MapEmbed, embed, preview_html
from countgrid.maps._widget import widget

register_map(grid_to_html, preview_html, widget)

__all__ = ["write_html", "write_bundle", "embed", "MapEmbed", "widget", "map_data",
           "feature_shares",
           "rank_documents", "search_cells", "safe_link", "read_annotations",
           "truncate_text", "SEARCH_FRACTION", "MAX_TITLE_CHARS", "MAX_ID_CHARS",
           "MAX_SNIPPET_CHARS", "MAX_LABEL_CHARS", "MAX_NAME_CHARS", "MAX_WORD_CHARS",
           "MAX_LINK_CHARS"]
