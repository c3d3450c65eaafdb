"""Reading the map's annotation files (countgrid.maps.read_annotations) without a browser:
the errors a stranger's file or name gets (test_notes_browser.py: the page's own)."""
import pytest

from countgrid.maps import read_annotations


def test_an_empty_file_name_is_named():
    """read_annotations("") opened "" (FileNotFoundError "No such file or directory: ''",
    naming nothing)."""
    for name in ("", b""):
        with pytest.raises(ValueError, match="annotations: the file name is empty"):
            read_annotations(name)


def test_a_number_beyond_python_s_digit_limit_is_not_json(tmp_path):
    """A 5,000-digit number: Python's plain ValueError ("Exceeds the limit (4300 digits)
    for integer string conversion") went through unnamed."""
    path = tmp_path / "digits.json"
    path.write_text('{"countgrid_annotations": 1, "extent": [' + "9" * 5000 + ", 4]}")
    with pytest.raises(ValueError, match=r"annotations: not a JSON file \(Exceeds the limit"):
        read_annotations(path)
    with pytest.raises(ValueError, match="annotations: not a JSON file"):
        read_annotations(str(path))
