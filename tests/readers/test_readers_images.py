"""Image documents in version folders: sub-folders, zip archives, loose images, corrupt ones."""
from __future__ import annotations

import zipfile

import pytest

from cppdb.config import load_config
from cppdb.errors import BadInputError
from cppdb.ocr.render import render_subtitle_image
from cppdb.readers.documents import read_document, read_version_dir

SERIAL = load_config(overrides=["ocr.workers=1"])


def test_version_dir_with_image_documents(tmp_path):
    version = tmp_path / "version_b"
    render_subtitle_image("我們回家吧", version / "ep2" / "0001.png")     # traditional
    render_subtitle_image("好的", version / "ep2" / "0002.png")
    (version / "ep2" / "0003.png").write_bytes(b"\x89PNG broken")
    with zipfile.ZipFile(version / "ep1.zip", "w") as archive:
        archive.write(version / "ep2" / "0002.png", "cues/0001.png")
    render_subtitle_image("散落的字幕", version / "loose-01.png")
    (version / "ep3.zip").write_bytes(b"PK\x03\x04 broken")
    skipped: list[tuple[str, str]] = []
    docs = read_version_dir(version, config=SERIAL, skipped=skipped)
    assert [(d.name, d.kind, d.units) for d in docs] == [
        ("ep1", "images", ("好的",)),
        ("ep2", "images", ("我们回家吧", "好的")),   # converted to simplified
        ("version_b", "images", ("散落的字幕",))]
    assert docs[1].converted and docs[1].sources[0].endswith("0001.png")
    assert [(p.rsplit("/", 1)[-1], r.split(":")[0]) for p, r in docs[1].problems] == [
        ("0003.png", "cannot decode image")]
    assert [(p.rsplit("/", 1)[-1], "not a readable zip archive" in r) for p, r in skipped] == [
        ("ep3.zip", True)]


def test_image_document_without_text(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "a.png").write_bytes(b"nope")
    with pytest.raises(BadInputError, match="no text could be read") as info:
        read_document(folder, config=SERIAL)
    assert "a.png: cannot decode image" in info.value.message
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInputError, match="contains no images"):
        read_document(tmp_path / "empty", config=SERIAL)
