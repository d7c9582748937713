"""Calibrate the guideline relevance threshold on the checked-in question set.

Every in-corpus question must find one of its expected chunks in the top k, and the
score of that chunk is its "in" score; every out-of-corpus question's best score is its
"out" score. The threshold is the midpoint of the gap between the highest out score and
the lowest in score, so both sides keep the same margin. No gap means no threshold:
the run fails and names the questions that overlap.

    python -m retrieve.calibrate            # print the report (builds a temp index)
    python -m retrieve.calibrate --write    # also record it in retrieve/thresholds.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from corpus.loader import load_corpus
from retrieve.guidelines import THRESHOLDS_FILE, GuidelineSearcher, build_indexes, threshold_key

REPO_ROOT = Path(__file__).resolve().parent.parent
QUESTIONS_FILE = REPO_ROOT / "golden" / "guideline_questions.json"
# Questions kept out of calibration so tests can check the threshold on text it never
# saw (tests/retrieve/test_guideline_search.py); calibrating on them would make that check moot.
HOLDOUT_FILE = REPO_ROOT / "golden" / "guideline_questions_holdout.json"


class CalibrationFailed(ValueError):
    pass


@dataclass(frozen=True)
class QuestionScore:
    id: str
    score: float
    top_chunk_id: str | None


@dataclass
class CalibrationReport:
    k: int
    in_corpus: list[QuestionScore] = field(default_factory=list)
    out_of_corpus: list[QuestionScore] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)  # expected chunk not in top k

    @property
    def min_in(self) -> float:
        return min(q.score for q in self.in_corpus)

    @property
    def max_out(self) -> float:
        return max(q.score for q in self.out_of_corpus)

    def threshold(self) -> float:
        if self.misses:
            raise CalibrationFailed(f"expected chunk not in top {self.k} for: {', '.join(self.misses)}")
        return midpoint_threshold(self.min_in, self.max_out)

    def overlaps(self) -> list[str]:
        """Questions on the wrong side of each other's scores (empty when separable)."""
        low_in = [q.id for q in self.in_corpus if q.score <= self.max_out]
        high_out = [q.id for q in self.out_of_corpus if q.score >= self.min_in]
        return low_in + high_out


def midpoint_threshold(min_in: float, max_out: float) -> float:
    """Halfway across the gap; equal margin for false refusals and false answers."""
    if min_in <= max_out:
        raise CalibrationFailed(f"no gap: lowest in-corpus score {min_in:.4f} <= highest out-of-corpus {max_out:.4f}")
    return round((min_in + max_out) / 2, 4)


def load_questions(path: Path = QUESTIONS_FILE) -> dict[str, Any]:
    if Path(path).resolve() == HOLDOUT_FILE.resolve():
        raise CalibrationFailed(f"{HOLDOUT_FILE.name} is the held-out set: the threshold must never see it")
    return json.loads(path.read_text(encoding="utf-8"))


def score_questions(searcher: GuidelineSearcher, questions: dict[str, Any]) -> CalibrationReport:
    k = int(questions["k"])
    report = CalibrationReport(k=k)
    for item in questions["in_corpus"]:
        ranked, _ = searcher.rank(item["question"])
        expected = set(item["expected_chunk_ids"])
        scores = [score for cid, score in ranked[:k] if cid in expected]
        if not scores:
            report.misses.append(item["id"])
        report.in_corpus.append(QuestionScore(item["id"], max(scores, default=0.0), ranked[0][0] if ranked else None))
    for item in questions["out_of_corpus"]:
        ranked, _ = searcher.rank(item["question"])
        report.out_of_corpus.append(
            QuestionScore(item["id"], ranked[0][1] if ranked else 0.0, ranked[0][0] if ranked else None)
        )
    return report


def threshold_entry(report: CalibrationReport, searcher: GuidelineSearcher, questions_path: Path) -> dict[str, Any]:
    describe = getattr(searcher.reranker, "describe", None)
    return {
        "threshold": report.threshold(),
        "min_in_corpus": round(report.min_in, 4),
        "max_out_of_corpus": round(report.max_out, 4),
        "corpus_version": searcher.corpus_version,
        "embedding_model": searcher.embedder.name,
        "reranker": describe() if describe else {"name": searcher.reranker.name},
        "questions": str(questions_path.relative_to(REPO_ROOT)) if questions_path.is_relative_to(REPO_ROOT) else str(questions_path),
        "in_corpus": len(report.in_corpus),
        "out_of_corpus": len(report.out_of_corpus),
        "k": report.k,
        "calibrated": True,
    }


def write_entry(key: str, entry: dict[str, Any], path: Path = THRESHOLDS_FILE) -> None:
    entries = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    entries[key] = entry
    path.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    from retrieve.embedder import MiniLmOnnxEmbedder

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="record the threshold in retrieve/thresholds.json")
    parser.add_argument("--questions", type=Path, default=QUESTIONS_FILE)
    args = parser.parse_args(argv)
    embedder = MiniLmOnnxEmbedder()
    version, chunks = load_corpus()
    questions = load_questions(args.questions)
    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        build_indexes(tmp, version, chunks, embedder)
        searcher = GuidelineSearcher(tmp, embedder=embedder, chunks=chunks, threshold=0.0)
        report = score_questions(searcher, questions)
        try:
            entry = threshold_entry(report, searcher, args.questions.resolve())
        except CalibrationFailed as exc:
            print(json.dumps({"ok": False, "error": str(exc), "overlaps": report.overlaps(),
                              "report": asdict(report)}, indent=2))
            return 1
        key = threshold_key(searcher.reranker.name, embedder.name)
    if args.write:
        write_entry(key, entry)
    print(json.dumps({"ok": True, "key": key, "written": args.write, **entry}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
