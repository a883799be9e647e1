"""Our PII scrubber next to Microsoft Presidio: what survives each, and how fast each is.

    python3.11 -m venv /root/.cache/qpipe/presidio-venv
    /root/.cache/qpipe/presidio-venv/bin/pip install presidio-analyzer==2.2.366 presidio-anonymizer==2.2.366 \\
        pydantic==2.14.4 phonenumbers==9.0.43 python-stdnum==2.2
    nice -n 10 /root/.cache/qpipe/presidio-venv/bin/python benchmarks/pii_frameworks.py

Runs with a separate interpreter that has Presidio (the project's .venv does not); our package is
imported from the repository root and the batteries from tests/calibration (as package `calibration`).

Measures, for our scrubber (`Scrubber(PIIConfig()).scrub_text`) and for Presidio (the analyzer's
findings replaced by the anonymizer's default operator, `<ENTITY_TYPE>`):

- survivors: the cases of tests/calibration/pii_batteries.py (NAMED: kinds users reported surviving;
  HELD_OUT: kinds no detector of ours was written for) in which some value is still in the scrubbed
  text, per battery and per kind;
- throughput: message texts scrubbed per second, one process, on the user and assistant messages of
  the demo logs that the DVC `split` stage reads (params.yaml `data.sources`; lines over
  `data.max_line_bytes`, which ingestion rejects, left out), distinct texts in a seeded shuffle, after
  a warm-up on other texts. Presidio and ours take turns on the same records (--presidio-records),
  --rounds times with fresh scrubbers; the best round of each is reported (the machine may be
  shared) and the ratio is taken there. Ours is also timed on --ours-records records cycling over
  all distinct texts with a new Scrubber each pass (its per-text cache never answers), and on the
  corpus as it is (duplicates, cache on). 1,000,000 records on 2 processes is extrapolated as
  1e6 / (2 x rate). One text of an oversize line is timed apart for each (--no-long-text skips it);
- what each alters in the same records, and which Presidio findings our scrubber left in place.

Presidio runs without any trained model (spaCy models are not on PyPI): its NLP engine is spaCy's
rule-based tokenizer (`spacy.blank`), with lower-cased tokens standing in for lemmas so that the
recognizers' context words still raise scores; no NER recognizer (SpacyRecognizer, GLiNER,
transformers, cloud services) is loaded. Two registries:

- `all` (the main column): every predefined recognizer of presidio_analyzer.predefined_recognizers'
  generic and country_specific modules (patterns, checksums, phonenumbers), disabled-by-default ones
  included, each with its own context words, registered for one analysis language ("en") so that a
  single pass runs all of them over every text whatever its language (the records carry no
  language, and Presidio does not detect one);
- `default`: Presidio's shipped registry (conf/default_recognizers.yaml, enabled recognizers only),
  loaded for every language its enabled recognizers name (en, es, it, pl), each text analysed once
  per language and the findings united (survivors only).

Score threshold: AnalyzerEngine's default (0, and no recognizer sets its own); `all` is also shown
at 0.5. tldextract (Presidio's e-mail validation) is pointed at its bundled suffix list so that it
does not try the network. Figures go to --out as results.json and results.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import inspect
import itertools
import json
import logging
import os
import platform
import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from calibration.pii_batteries import HELD_OUT, NAMED, survivors  # noqa: E402
from calibration.pii_battery_unseen import UNSEEN  # noqa: E402
from calibration.pii_battery_unseen2 import BUSINESS, UNSEEN2  # noqa: E402
from calibration.pii_battery_unseen3 import BUSINESS3, UNSEEN3  # noqa: E402
from calibration.pii_battery_unseen4 import BUSINESS4, UNSEEN4  # noqa: E402

BATTERIES = (("NAMED", NAMED), ("HELD_OUT", HELD_OUT), ("UNSEEN", UNSEEN), ("UNSEEN2", UNSEEN2),
             ("UNSEEN3", UNSEEN3), ("UNSEEN4", UNSEEN4))

from pipeline.calibration.pii import PIIConfig, Scrubber  # noqa: E402

DEFAULT_OUT = REPO / "benchmarks" / "results" / "pii-frameworks-2026-12-05"
PRESIDIO_VENV = "/root/.cache/qpipe/presidio-venv"
ANALYSIS_LANGUAGE = "en"
PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*?)(?:_\d+)?>")


# ------------------------------------------------------------------------------ Presidio

def _presidio():
    """Presidio's modules, or a clear exit when this interpreter has none."""
    try:
        import spacy
        import tldextract
        from presidio_analyzer import AnalyzerEngine, EntityRecognizer, RecognizerRegistry
        from presidio_analyzer import predefined_recognizers as predefined
        from presidio_analyzer.nlp_engine import NlpArtifacts, SpacyNlpEngine
        from presidio_analyzer.recognizer_registry import RecognizerRegistryProvider
        from presidio_anonymizer import AnonymizerEngine
    except ImportError as exc:  # pragma: no cover - a hint, not a code path
        sys.exit(f"Presidio is not importable here ({exc}); run with {PRESIDIO_VENV}/bin/python")
    return {"spacy": spacy, "tldextract": tldextract, "AnalyzerEngine": AnalyzerEngine,
            "EntityRecognizer": EntityRecognizer, "RecognizerRegistry": RecognizerRegistry,
            "predefined": predefined, "NlpArtifacts": NlpArtifacts, "SpacyNlpEngine": SpacyNlpEngine,
            "RecognizerRegistryProvider": RecognizerRegistryProvider, "AnonymizerEngine": AnonymizerEngine}


def _blank_engine(p, languages: list[str]):
    """Presidio's SpacyNlpEngine over `spacy.blank(lang)` pipelines: tokens, stop words and
    punctuation, no NER and no lemmatizer; lower-cased tokens serve as lemmas for context words."""

    class BlankSpacyNlpEngine(p["SpacyNlpEngine"]):
        engine_name = "spacy_blank"

        def load(self) -> None:  # no model to load (nor to download)
            self.nlp = {}
            for model in self.models:
                try:
                    self.nlp[model["lang_code"]] = p["spacy"].blank(model["lang_code"])
                except ImportError:  # a tokenizer with a dependency of its own (ko, ja, th): as the
                    self.nlp[model["lang_code"]] = p["spacy"].blank("xx")  # slim engine, multilingual

        def _doc_to_nlp_artifact(self, doc, language: str):
            return p["NlpArtifacts"](
                entities=[], tokens=doc, tokens_indices=[t.idx for t in doc],
                lemmas=[t.lemma_ or t.lower_ for t in doc], nlp_engine=self, language=language, scores=[])

    engine = BlankSpacyNlpEngine(models=[{"lang_code": lang, "model_name": f"blank:{lang}"} for lang in languages])
    engine.load()
    return engine


def _pattern_recognizer_classes(p) -> list[type]:
    """Every predefined recognizer that needs no model or service: the generic and country_specific
    modules (regular expressions with validation/checksums, and phonenumbers)."""
    found = {}
    for name in dir(p["predefined"]):
        cls = getattr(p["predefined"], name)
        if (inspect.isclass(cls) and issubclass(cls, p["EntityRecognizer"])
                and any(part in cls.__module__ for part in (".generic.", ".country_specific."))):
            found[cls.__name__] = cls
    return [found[name] for name in sorted(found)]


class PresidioScrubber:
    """AnalyzerEngine + AnonymizerEngine (default operator: replace with `<ENTITY_TYPE>`)."""

    def __init__(self, p, analyzer, languages: list[str], score_threshold: float | None = None) -> None:
        self.p = p
        self.analyzer = analyzer
        self.languages = languages
        self.score_threshold = score_threshold
        self.anonymizer = p["AnonymizerEngine"]()
        self.entities: Counter[str] = Counter()
        self.log: list | None = None  # (text, findings) of every scrubbed text, when a list

    def analyze(self, text: str) -> list:
        results = []
        for lang in self.languages:
            results.extend(self.analyzer.analyze(text=text, language=lang, score_threshold=self.score_threshold))
        if len(self.languages) > 1:
            results = self.p["EntityRecognizer"].remove_duplicates(results)
        return results

    def scrub(self, text: str) -> str:
        results = self.analyze(text)
        self.entities.update(r.entity_type for r in results)
        if self.log is not None:
            self.log.append((text, results))
        return self.anonymizer.anonymize(text=text, analyzer_results=results).text if results else text


def build_presidio(p) -> tuple[dict[str, PresidioScrubber], dict]:
    """The `all` and `default` configurations, and a description of each."""
    tldx = p["tldextract"]
    tldx.tldextract.TLD_EXTRACTOR = tldx.TLDExtract(suffix_list_urls=())  # the bundled suffix list
    classes = _pattern_recognizer_classes(p)
    recognizers = [cls(supported_language=ANALYSIS_LANGUAGE) for cls in classes]
    native = {cls.__name__: inspect.signature(cls.__init__).parameters["supported_language"].default
              for cls in classes}
    registry_all = p["RecognizerRegistry"](recognizers=recognizers, supported_languages=[ANALYSIS_LANGUAGE])
    analyzer_all = p["AnalyzerEngine"](registry=registry_all, nlp_engine=_blank_engine(p, [ANALYSIS_LANGUAGE]),
                                       supported_languages=[ANALYSIS_LANGUAGE])

    import yaml

    conf = Path(inspect.getfile(p["AnalyzerEngine"])).parent / "conf" / "default_recognizers.yaml"
    default_conf = yaml.safe_load(conf.read_text())
    langs: set[str] = set(default_conf.get("supported_languages") or [])
    for entry in default_conf["recognizers"]:
        if entry.get("enabled", True):  # a language with no enabled recognizer would run nothing
            for lang in entry.get("supported_languages") or []:
                langs.add(lang["language"] if isinstance(lang, dict) else lang)
    default_langs = sorted(langs)
    registry_default = p["RecognizerRegistryProvider"](
        registry_configuration={"supported_languages": default_langs}).create_recognizer_registry()
    analyzer_default = p["AnalyzerEngine"](registry=registry_default, nlp_engine=_blank_engine(p, default_langs),
                                           supported_languages=default_langs)
    own_thresholds = {r.name: r.score_thresholds for r in recognizers + registry_default.recognizers
                      if getattr(r, "score_thresholds", None)}
    configs = {
        "presidio": PresidioScrubber(p, analyzer_all, [ANALYSIS_LANGUAGE]),
        "presidio_t0.5": PresidioScrubber(p, analyzer_all, [ANALYSIS_LANGUAGE], score_threshold=0.5),
        "presidio_default": PresidioScrubber(p, analyzer_default, default_langs),
    }
    by_lang: dict[str, list[str]] = {}
    for r in registry_default.recognizers:
        by_lang.setdefault(r.supported_language, []).append(r.name)
    description = {
        "nlp_engine": "presidio_analyzer SpacyNlpEngine subclass over spacy.blank(lang) (tokenizer, stop words, "
                      "punctuation; no NER, no lemmatizer: lemma = lower-cased token); no NER recognizer",
        "context_enhancer": "AnalyzerEngine default (LemmaContextAwareEnhancer, substring matching, 5 words before)",
        "default_score_threshold": analyzer_all.default_score_threshold,
        "recognizer_own_score_thresholds": own_thresholds,
        "tldextract": "TLDExtract(suffix_list_urls=()): bundled public-suffix snapshot, no network",
        "all": {
            "what": "every predefined recognizer in presidio_analyzer.predefined_recognizers generic + "
                    "country_specific, enabled or not in the default YAML, instantiated with "
                    f"supported_language={ANALYSIS_LANGUAGE!r} (own context words kept), one analyze() per text",
            "recognizers": len(recognizers),
            "native_language": native,
            "entities": sorted({e for r in recognizers for e in r.supported_entities}),
        },
        "default": {
            "what": "RecognizerRegistryProvider over the shipped conf/default_recognizers.yaml (enabled "
                    "recognizers), for every language it names; each text analysed once per language, "
                    "results united (EntityRecognizer.remove_duplicates)",
            "languages": default_langs,
            "recognizers_by_language": {k: sorted(v) for k, v in sorted(by_lang.items())},
        },
    }
    return configs, description


# ------------------------------------------------------------------------------ batteries

def battery_table(scrubbers: dict[str, Callable[[str], str]]) -> tuple[list[dict], dict]:
    """Survivors per battery and kind for every scrubber; and per scrubber the surviving texts."""
    rows: list[dict] = []
    details: dict = {}
    for battery, cases in BATTERIES:
        kinds = list(dict.fromkeys(c.kind for c in cases))
        surv = {name: survivors(fn, cases) for name, fn in scrubbers.items()}
        for kind in kinds:
            row = {"battery": battery, "kind": kind, "n": sum(c.kind == kind for c in cases)}
            for name in scrubbers:
                row[name] = sum(c.kind == kind for c, _ in surv[name])
            rows.append(row)
        details[battery] = {name: [{"kind": c.kind, "text": c.text, "scrubbed": out} for c, out in s]
                            for name, s in surv.items()}
    return rows, details


def caught_by_one(name_a: str, fn_a, name_b: str, fn_b, analyze) -> list[dict]:
    """Cases that `name_b` scrubbed and `name_a` let through, with `name_b`'s output and findings."""
    out = []
    for battery, cases in BATTERIES:
        missed_a = {id(c) for c, _ in survivors(fn_a, cases)}
        missed_b = {id(c) for c, _ in survivors(fn_b, cases)}
        for case in cases:
            if id(case) in missed_a and id(case) not in missed_b:
                entry = {"battery": battery, "kind": case.kind, "text": case.text,
                         f"{name_b}_output": fn_b(case.text), f"{name_a}_output": fn_a(case.text)}
                if analyze is not None:
                    entry["presidio_findings"] = [
                        {"entity": r.entity_type, "text": case.text[r.start:r.end], "score": round(r.score, 2)}
                        for r in analyze(case.text)]
                out.append(entry)
    return out


# ------------------------------------------------------------------------------ corpus and timing

def load_corpus(repo: Path) -> tuple[list[str], list[str], dict]:
    """User and assistant message texts of the logs the `split` stage reads (params.yaml
    data.sources), in file order; those of lines over data.max_line_bytes (which ingestion rejects,
    so they never reach the scrubber) apart; and facts about them."""
    import yaml

    params = yaml.safe_load((repo / "params.yaml").read_text())
    sources = [repo / s for s in params["data"]["sources"]]
    max_line = int(params["data"].get("max_line_bytes") or 0)
    texts: list[str] = []
    oversize: list[str] = []
    files, bad = 0, 0
    for source in sources:
        for path in sorted(p for p in source.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file()):
            files += 1
            for raw in path.read_bytes().splitlines():
                try:
                    item = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    bad += 1
                    continue
                for msg in (item.get("messages") or []) if isinstance(item, dict) else []:
                    if (isinstance(msg, dict) and msg.get("role") in ("user", "assistant")
                            and isinstance(msg.get("content"), str) and msg["content"]):
                        (oversize if max_line and len(raw) > max_line else texts).append(msg["content"])
    facts = {"sources": [str(s.relative_to(repo)) for s in sources], "files": files, "unparsable_lines": bad,
             "max_line_bytes": max_line, "texts_of_oversize_lines_left_out": len(oversize),
             "message_texts": len(texts), "distinct_texts": len(set(texts))}
    return texts, oversize, facts


def timed(fn: Callable[[str], str], texts: Iterable[str], limit: int, budget_s: float) -> dict:
    """Run `fn` over up to `limit` texts or until `budget_s` has passed; records/s and chars/s."""
    outputs: list[tuple[str, str]] = []
    start = time.perf_counter()
    for text in texts:
        outputs.append((text, fn(text)))
        if len(outputs) >= limit or time.perf_counter() - start > budget_s:
            break
    return _stats(outputs, time.perf_counter() - start)


def timed_rounds(make_fns: Callable[[], dict[str, Callable[[str], str]]], texts: list[str], limit: int,
                 budget_s: float, rounds: int) -> dict[str, dict]:
    """Each scrubber over the same texts one after the other, `rounds` times (fresh scrubbers from
    `make_fns` each round); the first stops at `limit` texts or `budget_s`, the others take as many.
    Best round of each (a shared machine's load only ever slows a round down), with every round's rate."""
    best: dict[str, dict] = {}
    for _ in range(rounds):
        n = limit
        for name, fn in make_fns().items():
            run = timed(fn, texts, n, budget_s)
            n = run["records"]
            if name not in best or run["records_per_s"] > best[name]["records_per_s"]:
                best[name] = {**run, "rounds": best.get(name, {}).get("rounds", [])}
            best[name]["rounds"].append(run["records_per_s"])
    return best


def _stats(outputs: list[tuple[str, str]], wall: float) -> dict:
    n, chars = len(outputs), sum(len(text) for text, _ in outputs)
    return {"records": n, "chars": chars, "seconds": round(wall, 3), "records_per_s": round(n / wall, 1),
            "chars_per_s": round(chars / wall), "mean_chars": round(chars / max(n, 1), 1),
            "altered_records": sum(a != b for a, b in outputs),
            "hours_for_1M_on_2_processes": round(1e6 / (2 * n / wall) / 3600, 2), "_outputs": outputs}


class ColdScrubber:
    """Our scrubber with a new Scrubber every `period` records: cycling over `period` distinct
    texts, its per-text cache then never answers (every record is analysed)."""

    def __init__(self, period: int) -> None:
        self.period, self.seen, self.scrubber = period, 0, Scrubber(PIIConfig())

    def __call__(self, text: str) -> str:
        if self.seen and self.seen % self.period == 0:
            self.scrubber = Scrubber(PIIConfig())
        self.seen += 1
        return self.scrubber.scrub_text(text)


def corpus_comparison(presidio_log: list, ours_outputs: list[tuple[str, str]]) -> dict:
    """On the records both timed: which records each altered, our placeholder kinds, and Presidio's
    findings whose text is still verbatim in our output (a Presidio false positive or a miss of ours),
    counted by entity type with a few examples."""
    ours = dict(ours_outputs)
    altered = Counter()
    ours_kinds: Counter[str] = Counter()
    left: Counter[str] = Counter()
    examples: dict[str, list] = {}
    for text, results in presidio_log:
        mine = ours[text]
        altered[(mine != text, bool(results))] += 1
        ours_kinds.update(PLACEHOLDER.findall(mine))
        for r in results:
            value = text[r.start:r.end]
            if value in mine:
                left[r.entity_type] += 1
                if len(examples.setdefault(r.entity_type, [])) < 3:
                    examples[r.entity_type].append({"value": value, "score": round(r.score, 2),
                                                    "context": text[max(0, r.start - 50):r.end + 30]})
    return {"records": len(presidio_log),
            "altered_by_both": altered[(True, True)], "altered_by_ours_only": altered[(True, False)],
            "altered_by_presidio_only": altered[(False, True)], "altered_by_neither": altered[(False, False)],
            "ours_placeholder_kinds": dict(ours_kinds.most_common()),
            "presidio_findings_left_by_ours": dict(left.most_common()), "examples": examples}


# ------------------------------------------------------------------------------ report

def _versions() -> dict:
    names = ["presidio-analyzer", "presidio-anonymizer", "spacy", "phonenumbers", "python-stdnum", "pydantic",
             "tldextract", "regex"]
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _machine() -> dict:
    cpu = ""
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), "")
    except OSError:
        pass
    return {"python": platform.python_version(), "platform": platform.platform(), "cpu": cpu,
            "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)), "nice": os.nice(0),
            "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


def _source_state(repo: Path) -> dict:
    pii = repo / "pipeline" / "calibration" / "pii"
    digest = hashlib.sha256()
    for path in sorted(pii.rglob("*.py")):
        digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes())

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""
    return {"git_head": git("rev-parse", "HEAD"),
            "pii_uncommitted_changes": bool(git("status", "--porcelain", "--", "pipeline/calibration/pii",
                                                "tests/calibration/pii_batteries.py")),
            "pii_sources_sha256": digest.hexdigest()}


def markdown(result: dict) -> str:
    cols = result["survivor_columns"]
    heads = {"ours": "ours", "presidio": "Presidio all (t=0)", "presidio_t0.5": "Presidio all (t=0.5)",
             "presidio_default": "Presidio default reg. (t=0)"}
    lines = [f"# PII frameworks: our scrubber vs Presidio ({result['date']})", "",
             f"Command: `{result['command']}`", "",
             f"Presidio analyzer {result['versions']['presidio-analyzer']}, anonymizer "
             f"{result['versions']['presidio-anonymizer']}, spaCy {result['versions']['spacy']} (blank pipelines, "
             f"no model); Python {result['machine']['python']}; {result['machine']['cpu']}, "
             f"{result['machine']['cores']} cores, load average at start {result['machine']['loadavg_at_start']} "
             f"(shared machine, nice {result['machine']['nice']}). Our PII sources: sha256 "
             f"{result['source']['pii_sources_sha256'][:12]}, HEAD {result['source']['git_head'][:10]}, "
             f"uncommitted changes: {result['source']['pii_uncommitted_changes']}.", "",
             "## Survivors (cases where a value is still in the scrubbed text; lower is better)", "",
             "| battery | kind | n | " + " | ".join(heads[c] for c in cols) + " |",
             "|---|---|---:|" + "---:|" * len(cols)]
    for row in result["survivors"]:
        lines.append(f"| {row['battery']} | {row['kind']} | {row['n']} | "
                     + " | ".join(str(row[c]) for c in cols) + " |")
    for battery, tot in result["survivor_totals"].items():
        lines.append(f"| **{battery}** | **total** | **{tot['n']}** | "
                     + " | ".join(f"**{tot[c]}**" for c in cols) + " |")
    lines += ["", "## Throughput (one process; records = user/assistant message texts of the demo logs)", "",
              "| run | records | mean chars | s | records/s | chars/s | altered records | h for 1M on 2 proc |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t in result["throughput"].items():
        lines.append(f"| {name} | {t['records']} | {t['mean_chars']} | {t['seconds']} | {t['records_per_s']} | "
                     f"{t['chars_per_s']} | {t['altered_records']} | {t['hours_for_1M_on_2_processes']} |")
    lines += ["", "Ratio on the same records (ours / Presidio), best rounds: "
              f"**{result['speed_ratio_same_records']}x** "
              f"(round by round: {result['speed_ratio_per_round']}; rates per round: "
              + "; ".join(f"{k} {v['rounds']}" for k, v in result["throughput"].items() if "rounds" in v) + ").", "",
              f"One long text (an oversize line that ingestion rejects, timed apart), seconds: "
              f"{result['long_text_seconds']}.", "",
              f"Presidio entities found in its timed records: {result['presidio_corpus_entities']}.", "",
              f"Our placeholders in the same records: {result['corpus_comparison']['ours_placeholder_kinds']}.", "",
              "Records altered (same records): " + ", ".join(
                  f"{k.removeprefix('altered_by_').replace('_', ' ')} {v}"
                  for k, v in result["corpus_comparison"].items() if k.startswith("altered_by_")) + ".", "",
              "Presidio findings whose text our scrubber left in place (Presidio false positive or our miss): "
              f"{result['corpus_comparison']['presidio_findings_left_by_ours']}.", "",
              "## Cases Presidio scrubbed and ours did not", ""]
    for e in result["presidio_only"]:
        found = ", ".join(f"{f['entity']} {f['text']!r} {f['score']}" for f in e["presidio_findings"])
        lines.append(f"- {e['battery']} {e['kind']}: `{e['presidio_output']}` ({found})")
    if not result["presidio_only"]:
        lines.append("none")
    lines += ["", "## Cases ours scrubbed and Presidio did not (per kind)", "",
              ", ".join(f"{k} {v}" for k, v in result["ours_only_by_kind"].items()) or "none", "",
              "## Presidio findings left by ours in the corpus: examples", ""]
    for entity, exs in result["corpus_comparison"]["examples"].items():
        lines.append(f"- {entity}: " + "; ".join(f"`{e['value']}` ({e['score']}) in `…{e['context']}…`"
                                                  .replace("\n", " ") for e in exs))
    lines += ["",
              "## Presidio configuration", "", "```json", json.dumps(result["presidio_config"], indent=1), "```", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--presidio-records", type=int, default=2000)
    ap.add_argument("--ours-records", type=int, default=20000)
    ap.add_argument("--budget-s", type=float, default=120.0, help="time limit of each throughput run")
    ap.add_argument("--seed", type=int, default=20261205)
    ap.add_argument("--long-text", action=argparse.BooleanOptionalAction, default=True,
                    help="also time one text of an oversize line (ingestion rejects it) for each")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the same-records comparison (best kept)")
    ap.add_argument("--warmup", type=int, default=500, help="texts (from the end of the shuffle) run before timing")
    args = ap.parse_args()
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    logging.getLogger("tldextract").setLevel(logging.CRITICAL)

    machine, versions, source = _machine(), _versions(), _source_state(REPO)
    p = _presidio()
    t0 = time.perf_counter()
    presidio, presidio_config = build_presidio(p)
    presidio_setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = Scrubber(PIIConfig())
    ours_setup_s = time.perf_counter() - t0

    # survivors
    fns = {"ours": ours.scrub_text, **{name: cfg.scrub for name, cfg in presidio.items()}}
    rows, details = battery_table(fns)
    totals = {}
    for battery, _ in BATTERIES:
        sel = [r for r in rows if r["battery"] == battery]
        totals[battery] = {"n": sum(r["n"] for r in sel), **{c: sum(r[c] for r in sel) for c in fns}}
    totals["all"] = {k: sum(totals[b][k] for b, _ in BATTERIES) for k in totals["NAMED"]}
    # business sentences that must come out unchanged: how many each scrubber alters
    for name, texts in (("BUSINESS", BUSINESS), ("BUSINESS3", BUSINESS3), ("BUSINESS4", BUSINESS4)):
        totals[f"{name} changed"] = {"n": len(texts), **{c: sum(fn(t) != t for t in texts) for c, fn in fns.items()}}
    main_presidio = presidio["presidio"]
    presidio_only = caught_by_one("ours", ours.scrub_text, "presidio", main_presidio.scrub, main_presidio.analyze)
    ours_only = caught_by_one("presidio", main_presidio.scrub, "ours", ours.scrub_text, None)

    # throughput
    corpus, oversize, corpus_facts = load_corpus(REPO)
    distinct = list(dict.fromkeys(corpus))
    random.Random(args.seed).shuffle(distinct)
    warm = distinct[-args.warmup:] if args.warmup else []  # lazy loads (phonenumbers metadata, regexes) of
    warm_scrubber = Scrubber(PIIConfig())                      # both, outside the timed records
    for text in warm:
        main_presidio.scrub(text)
        warm_scrubber.scrub_text(text)
    scrubbers: list[Scrubber] = []

    def make_fns() -> dict[str, Callable[[str], str]]:  # a new round: what the last one logged goes
        main_presidio.entities.clear()
        main_presidio.log = []
        scrubbers.append(Scrubber(PIIConfig()))
        return {"presidio": main_presidio.scrub, "ours": scrubbers[-1].scrub_text}

    pair = timed_rounds(make_fns, distinct, args.presidio_records, args.budget_s, args.rounds)
    fresh = scrubbers[-1]
    runs = {"presidio (all recognizers)": pair["presidio"], "ours, same records": pair["ours"]}
    runs["ours, cold cache"] = timed(ColdScrubber(len(distinct)), itertools.cycle(distinct), args.ours_records,
                                     args.budget_s)
    natural = Scrubber(PIIConfig())
    runs["ours, demo corpus as is (duplicates, cache on)"] = timed(natural.scrub_text, corpus, len(corpus),
                                                                   args.budget_s)
    presidio_examples = []
    for text, out in runs["presidio (all recognizers)"]["_outputs"]:
        if text != out and len(presidio_examples) < 12:
            presidio_examples.append({"text": text[:300], "presidio": out[:300],
                                      "ours": fresh.scrub_text(text)[:300]})
    corpus_diff = corpus_comparison(main_presidio.log, runs["ours, same records"]["_outputs"])
    main_presidio.log = None
    for t in runs.values():
        t.pop("_outputs")
    long_text = {}
    if oversize and args.long_text:  # how each copes with one very long text (not in the figures above)
        text = max(oversize, key=len)
        for name, fn in (("presidio", main_presidio.scrub), ("ours", Scrubber(PIIConfig()).scrub_text)):
            start = time.perf_counter()
            fn(text)
            long_text[name] = round(time.perf_counter() - start, 3)
        long_text["chars"] = len(text)
    ratio = round(runs["ours, same records"]["records_per_s"] / runs["presidio (all recognizers)"]["records_per_s"], 1)
    round_ratios = [round(o / p_, 1) for o, p_ in zip(runs["ours, same records"]["rounds"],
                                                      runs["presidio (all recognizers)"]["rounds"])]
    machine["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]

    result = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": (f"nice -n {os.nice(0)} " if os.nice(0) else "") + " ".join([sys.executable, *sys.argv]),
        "versions": versions, "machine": machine, "source": source,
        "presidio_config": presidio_config,
        "setup_s": {"presidio_both_configs": round(presidio_setup_s, 2), "ours": round(ours_setup_s, 3)},
        "survivor_columns": list(fns), "survivors": rows, "survivor_totals": totals,
        "presidio_only": presidio_only,
        "ours_only_by_kind": dict(Counter(e["kind"] for e in ours_only)),
        "survivor_outputs": details,
        "corpus": {**corpus_facts, "shuffle_seed": args.seed, "warmup_texts": len(warm)},
        "throughput": runs, "speed_ratio_same_records": ratio,
        "speed_ratio_per_round": round_ratios,
        "presidio_corpus_entities": dict(main_presidio.entities.most_common()),
        "presidio_corpus_examples": presidio_examples,
        "corpus_comparison": corpus_diff,
        "long_text_seconds": long_text,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    (args.out / "results.md").write_text(markdown(result))

    cols = list(fns)
    print(f"{'battery':9} {'kind':28} {'n':>3} " + " ".join(f"{c:>16}" for c in cols))
    for row in rows:
        print(f"{row['battery']:9} {row['kind']:28} {row['n']:>3} " + " ".join(f"{row[c]:>16}" for c in cols))
    for battery, tot in totals.items():
        print(f"{battery:9} {'TOTAL':28} {tot['n']:>3} " + " ".join(f"{tot[c]:>16}" for c in cols))
    print()
    for name, t in runs.items():
        print(f"{name:48} {t['records']:>6} rec {t['seconds']:>7.1f} s {t['records_per_s']:>9.1f} rec/s "
              f"{t['chars_per_s']:>9} chars/s  altered {t['altered_records']:>5}  "
              f"1M on 2 proc: {t['hours_for_1M_on_2_processes']} h")
    print(f"ratio ours/presidio on the same records: {ratio}x (per round {round_ratios}); long text {long_text}")
    print(f"results in {args.out}")


if __name__ == "__main__":
    main()
