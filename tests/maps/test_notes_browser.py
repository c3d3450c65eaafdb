"""Region names and cell notes (docs/map.md, "Names and notes") in a real headless
Chromium: renamed in the page, saved as JSON through the download, read back by
countgrid.maps.read_annotations, applied to a new map by write_html(annotations=), and
loaded into a page by its button; hostile files are refused with a message."""
import json

import pytest

from countgrid.maps import map_data, read_annotations, write_html


@pytest.fixture(scope="module")
def notes_map(fitted, tmp_path_factory):
    return write_html(fitted["grid"], tmp_path_factory.mktemp("notes") / "map.html",
                      fitted["X"], titles=fitted["titles"])


def test_rename_note_save_and_apply_to_a_new_map(open_map, fitted, notes_map, tmp_path):
    pg = open_map(notes_map)
    levels = pg("countgridMap.regionLevels()")
    n = levels[0]
    # rename region 1 through its button and input, note a cell through the panel
    pg.page.locator('#cg-regions li[data-region="1"] .cg-rename').click()
    field = pg.page.locator("#cg-regions .cg-rename-input")
    field.fill("  the   second   region ")
    field.press("Enter")
    assert pg(f"countgridMap.regionOf(1, {n})") is not None
    assert pg.page.inner_text('#cg-regions li[data-region="1"] .cg-region-name') == \
        "the second region"
    pg("countgridMap.pin(2, 3)")
    pg.page.fill("#cg-note-text", "look here =1+1")
    pg.page.dispatch_event("#cg-note-text", "change")
    assert pg("countgridMap.notes()") == [[2, 3, "look here =1+1"]]
    with pg.page.expect_download() as dl:
        pg.page.click("#cg-notes-save")
    saved = tmp_path / "notes.json"
    dl.value.save_as(saved)
    ann = read_annotations(saved)
    assert ann["extent"] == [10, 13] and read_annotations(ann) == ann     # a valid input
    assert [r["name"] for r in ann["regions"]] == ["the second region"]
    assert ann["regions"][0]["n_regions"] == n
    assert ann["notes"] == [{"cell": [2, 3], "text": "look here =1+1"}]
    # a new map of the same grid, written with the file, shows the name and the note
    again = write_html(fitted["grid"], tmp_path / "again.html", fitted["X"],
                       annotations=saved)
    pg2 = open_map(again)
    data = map_data(fitted["grid"], fitted["X"])
    coarse = min(data["regions"], key=lambda lev: lev["n_regions"])
    r, c = ann["regions"][0]["anchor"]
    k = int(coarse["labels"][r * 13 + c])
    assert k == 1
    assert pg2.page.inner_text(f'#cg-regions li[data-region="{k}"] .cg-region-name') == \
        "the second region"
    assert pg2("countgridMap.notes()") == [[2, 3, "look here =1+1"]]
    assert pg2("JSON.stringify(countgridMap.annotations())") == \
        pg("JSON.stringify(countgridMap.annotations())")
    assert pg.errors == [] and pg2.errors == []


def test_the_load_button_and_hostile_files(open_map, notes_map, tmp_path):
    pg = open_map(notes_map)
    good = {"countgrid_annotations": 1, "extent": [10, 13],
            "regions": [{"n_regions": pg("countgridMap.regionLevels()")[0],
                         "anchor": [0, 0], "name": "<b>named</b>"}],
            "notes": [{"cell": [9, 12], "text": "x" * 5000}, {"cell": [99, 0], "text": "off"},
                      {"cell": [1, 1], "text": 7}]}
    cases = [("good.json", json.dumps(good), "Notes loaded."),
             ("other.json", json.dumps(dict(good, extent=[5, 5])), "another grid"),
             ("bad.json", "{not json", "not a JSON file"),
             ("list.json", "[1, 2]", "not a countgrid notes file"),
             ("big.json", " " * (1 << 20) + "{}", "larger than 1 MB")]
    for name, text, message in cases:
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pg.page.expect_file_chooser() as fc:
            pg.page.click("#cg-notes-load")
        fc.value.set_files(str(tmp_path / name))
        pg.page.wait_for_function("(m) => document.getElementById('cg-status').textContent"
                                  ".includes(m)", arg=message, timeout=5000, polling=50)
    notes = pg("countgridMap.notes()")
    assert notes == [[9, 12, "x" * 999 + "\u2026"]]                 # cut; bad cells skipped
    k = pg("(n) => countgridMap.regionOf(0, n)", pg("countgridMap.regionLevels()")[0])
    assert k is not None
    assert "<b>named</b>" in pg("document.getElementById('cg-regions').textContent")
    assert pg("document.querySelectorAll('#cg-regions b').length") == 0       # text, not markup
    assert pg.errors == []


@pytest.mark.parametrize("doc, message", [
    ({"extent": [10, 13]}, "not a countgrid annotations file"),
    ({"countgrid_annotations": 1, "extent": [10]}, "extent must be"),
    ({"countgrid_annotations": 1, "extent": [10, 13], "notes": {}}, "notes must be a list"),
    ({"countgrid_annotations": 1, "extent": [10, 13], "notes": [{"cell": [10, 0], "text": "a"}]},
     r"notes\[0\].cell \[10, 0\] is outside the 10 x 13 grid"),
    ({"countgrid_annotations": 1, "extent": [10, 13], "notes": [{"cell": [1, True], "text": "a"}]},
     r"notes\[0\].cell must be a cell"),
    ({"countgrid_annotations": 1, "extent": [10, 13], "regions": [{"n_regions": 2, "anchor": [0, 0],
                                                                    "name": 5}]},
     r"regions\[0\].name must be a string"),
    ({"countgrid_annotations": 1, "extent": [10, 13],
      "notes": [{"cell": [0, 0], "text": "a"}] * 1001}, "more than 1000 notes"),
])
def test_read_annotations_refuses_what_is_not_one(doc, message):
    with pytest.raises(ValueError, match=message):
        read_annotations(doc)


def test_files_are_read_with_a_limit_and_applied_only_to_their_grid(fitted, tmp_path):
    (tmp_path / "big.json").write_bytes(b" " * (1 << 20) + b"{}")
    with pytest.raises(ValueError, match="larger than 1048576 bytes"):
        read_annotations(tmp_path / "big.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(ValueError, match="not a JSON file"):
        read_annotations(tmp_path / "bin.json")
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="not a JSON file|not a countgrid annotations"):
        read_annotations(tmp_path / "deep.json")
    with pytest.raises(TypeError, match="annotations must be a file name or a dict"):
        read_annotations(3)
    with pytest.raises(ValueError, match="written for a 4 x 4 grid, this map's is 10 x 13"):
        write_html(fitted["grid"], tmp_path / "m.html", fitted["X"],
                   annotations={"countgrid_annotations": 1, "extent": [4, 4]})
    assert not (tmp_path / "m.html").exists()
    page = fitted["grid"].to_html(X=fitted["X"], annotations={
        "countgrid_annotations": 1, "extent": [10, 13],
        "notes": [{"cell": [0, 1], "text": "  hello\n world "}]})
    assert "hello world" in page
