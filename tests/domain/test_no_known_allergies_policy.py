"""A "no known allergies" statement and the allergies the chart holds
(domain/policy/facts/no_known_allergies.py)."""

from domain.policy.facts.no_known_allergies import contradicted_by, is_no_known_allergies


def test_what_counts_as_a_no_known_allergies_statement():
    assert is_no_known_allergies({"substance": "", "status": "no_known_allergies"})
    assert is_no_known_allergies({"substance": None, "no_known_allergies": True})
    assert not is_no_known_allergies({"substance": "Latex", "no_known_allergies": False})
    assert not is_no_known_allergies(None)


def test_any_charted_allergy_contradicts_it_and_is_named():
    assert contradicted_by([]) is None and contradicted_by([None, " "]) is None
    reason = contradicted_by(["shellfish", "Penicillin", "penicillin"])
    assert "Penicillin" in reason and "shellfish" in reason and "contradicts" in reason
    many = contradicted_by(["a1", "b2", "c3", "d4"])
    assert "(a1, b2, c3, ...)" in many and "d4" not in many
