"""The walk of a TIFF's page directories (issue 28): a chain that loops back, points
past the end or holds garbage is named as damage; a clean one is not; a page Pillow
cannot reach is opened from its own directory."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from extract.formats.tiff_chain import chain_damage, starting_at, walk
from tests.support.damaged_corpus import bad_directory, directories, looping


@pytest.fixture(scope="module")
def three_pages() -> bytes:
    frames = [Image.new("L", (64, 32), shade) for shade in (0, 120, 240)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def test_a_clean_chain_lists_every_page(three_pages):
    chain = walk(three_pages)
    assert chain.damage is None and len(chain.offsets) == 3 == len(directories(three_pages))


def test_damaged_chains_are_named(three_pages):
    assert "loops back on itself after page 3" in chain_damage(looping(three_pages))
    assert "description of page 1 is unreadable" in chain_damage(bad_directory(three_pages))
    cut = three_pages[: directories(three_pages)[2] + 4]
    assert chain_damage(cut).startswith("the description of page 3 is cut short")
    assert walk(three_pages[: directories(three_pages)[2] - 1]).damage.startswith("page 3 lies past the end")


def test_not_a_tiff_is_not_walked():
    assert walk(b"%PDF-1.7 ...").offsets == [] and chain_damage(b"\x89PNG....") is None


def test_a_page_opens_from_its_own_directory(three_pages):
    third = starting_at(three_pages, directories(three_pages)[2])
    with Image.open(io.BytesIO(third)) as img:
        assert img.getpixel((0, 0)) == 240
