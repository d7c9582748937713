"""The clinic's order for numeric dates a document does not settle (``WORKBENCH_DATE_ORDER``):
``document_date_order`` takes the document's own evidence first, then the clinic's order
when one is set, and never settles a document that prints its dates both ways."""

from __future__ import annotations

import pytest

from extract.values.dates import clinic_date_order, document_date_order, find_date, settle


def test_nothing_printed_settles_it_and_no_order_is_set():
    assert document_date_order(["Collected 01/12/2026", "DOB 1958-09-14"]) is None


@pytest.mark.parametrize("order, day_first", [("day_first", True), ("month_first", False), ("", None)])
def test_the_clinics_order_settles_what_the_document_does_not(order, day_first):
    with clinic_date_order(order):
        assert document_date_order(["Collected 01/12/2026"]) is day_first
    assert document_date_order(["Collected 01/12/2026"]) is None  # only within the block


def test_the_documents_own_dates_come_before_the_clinics_order():
    with clinic_date_order("day_first"):
        # 12/31/2026 can only be month first: this document prints its dates that way.
        assert document_date_order(["Collected 01/12/2026", "Reported 12/31/2026"]) is False
    with clinic_date_order("month_first"):
        assert document_date_order(["Collected 01/12/2026", "Born 23/04/1961"]) is True


def test_a_document_printing_both_ways_stays_open_whatever_the_clinic_says():
    with clinic_date_order("day_first"):
        assert document_date_order(["Born 23/04/1961", "Reported 12/31/2026", "Collected 01/12/2026"]) is None


def test_settled_by_the_clinics_order_the_date_reads_day_first_and_is_no_longer_open():
    found = find_date("Collected: 01/12/2026 09:30")
    assert (found.iso, found.day_first_iso) == ("2026-01-12", "2026-12-01")
    with clinic_date_order("day_first"):
        settled = settle(found, document_date_order(["Collected: 01/12/2026 09:30"]))
    assert (settled.iso, settled.day_first_iso, settled.ambiguous) == ("2026-12-01", None, False)


def test_an_unknown_order_is_refused():
    with pytest.raises(KeyError):
        with clinic_date_order("dd/mm"):
            pass
