"""PII scrubber tests. Every value here is invented; checksummed ids are computed below."""

import logging
import re

import pytest
from pydantic import ValidationError

from pipeline.calibration.pii import ALL_KINDS, PIIConfig, PlaceholderMap, Scrubber
from pipeline.contracts.business_record import Record

# ------------------------------------------------------------------ checksum helpers


def luhn_complete(body: str) -> str:
    from stdnum import luhn

    return body + luhn.calc_check_digit(body)


def cn_resident_id(body17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body17 + "10X98765432"[sum(int(c) * w for c, w in zip(body17, weights)) % 11]


_VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
               [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
               [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
               [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
               [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
_VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
               [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
               [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
               [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
_VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_complete(body: str) -> str:
    c = 0
    for i, ch in enumerate(reversed(body)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[(i + 1) % 8][int(ch)]]
    return body + str(_VERHOEFF_INV[c])


def dni(number: int) -> str:
    return f"{number:08d}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"


def nie(prefix: str, number: int) -> str:
    value = int("XYZ".index(prefix) * 10_000_000 + number)
    return f"{prefix}{number:07d}{'TRWAGMYFPDXBNJZSQVHLCKE'[value % 23]}"


def nir(body13: str) -> str:
    return body13 + f"{97 - int(body13) % 97:02d}"


def test_helpers_produce_valid_checksums():
    # Known-good structure checks, so that a broken helper cannot make a test pass vacuously.
    assert luhn_complete("7992739871") == "79927398713"
    assert verhoeff_complete("236") == "2363"
    assert dni(12345678) == "12345678Z"
    assert cn_resident_id("11010519491231002") == "11010519491231002X"


# ----------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def scrubber():
    return Scrubber(PIIConfig())


def scrub(scrubber, text):
    return scrubber.scrub_text(text)


def assert_replaced(scrubber, value, kind, template="Please note {} for later."):
    text = template.format(value)
    out = scrubber.scrub_text(text)
    assert out == template.format(f"<{kind}_1>"), out
    return out


# ------------------------------------------------------------------------ positives

@pytest.mark.parametrize("email", [
    "jane.doe@example.com", "Q.Zhang+billing@corp-mail.example.org", "o'neil_77@mailbox.co.uk",
    "ÉLODIE.martin@post.example.fr",
])
def test_emails(scrubber, email):
    assert_replaced(scrubber, email, "EMAIL")


@pytest.mark.parametrize("phone", [
    "+49 (0)30 901820", "020 7946 0018", "(212) 555-0147", "+86 139-1099-8888",
    "+1 415.555.0132", "212-555-0147", "+44 7481 552093", "07911 123456", "06 12 34 56 78",
    "+33 6 12 34 56 78",
    "+91 98765 43210", "+55 11 91234-5678", "090-1234-5678", "030 901820", "0049 30 901820",
    "+44 7696 217272",  # unallocated range, but written with a country code: still a phone
    "07 09 27 68 13",   # likewise, in the French national layout
])
def test_phones(scrubber, phone):
    assert_replaced(scrubber, phone, "PHONE")


def test_phone_after_label_without_space(scrubber):
    assert scrub(scrubber, "Tel:+4930901820") == "Tel:<PHONE_1>"


def test_same_phone_in_two_formats_gets_one_placeholder(scrubber):
    out = scrub(scrubber, "Call +49 30 901820 or, from Germany, 030 901820.")
    assert out == "Call <PHONE_1> or, from Germany, <PHONE_1>."


CN_ID = cn_resident_id("33010619850317043")
CN_ID_X = next(cn_resident_id(f"44030519920222{n:03d}") for n in range(1000)
               if cn_resident_id(f"44030519920222{n:03d}").endswith("X"))
AADHAAR = verhoeff_complete("52749163085")
NIR = nir("2910775118042")


@pytest.mark.parametrize("value", [
    "536-22-1845", "401 73 2288",                       # US SSN
    "JT 48 29 17 B", "PR482917A",                       # UK NINO
    CN_ID, CN_ID_X, CN_ID_X.lower(),                    # Chinese resident id
    dni(48213370), f"{dni(23456789)[:8]}-{dni(23456789)[8]}",  # Spanish DNI
    nie("X", 4821337), nie("Y", 1234567),               # Spanish NIE
    f"{AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}",      # Aadhaar, grouped
    f"{NIR[0]} {NIR[1:3]} {NIR[3:5]} {NIR[5:7]} {NIR[7:10]} {NIR[10:13]} {NIR[13:]}", NIR,  # NIR
])
def test_national_ids(scrubber, value):
    assert_replaced(scrubber, value, "NATIONAL_ID")


def test_ungrouped_ids_need_their_label(scrubber):
    assert scrub(scrubber, "SSN: 536221845") == "SSN: <NATIONAL_ID_1>"
    assert scrub(scrubber, f"my Aadhaar number is {AADHAAR}") == "my Aadhaar number is <NATIONAL_ID_1>"
    assert scrub(scrubber, "ref 536221845") == "ref 536221845"


VISA = luhn_complete("453201511283036")
MASTER = luhn_complete("552277009183661")
AMEX = luhn_complete("37828224631000")


@pytest.mark.parametrize("card", [
    f"{VISA[:4]} {VISA[4:8]} {VISA[8:12]} {VISA[12:]}",
    f"{MASTER[:4]}-{MASTER[4:8]}-{MASTER[8:12]}-{MASTER[12:]}",
    VISA,
    f"{AMEX[:4]} {AMEX[4:10]} {AMEX[10:]}",
    f"{AMEX[:4]}-{AMEX[4:10]}-{AMEX[10:]}",
])
def test_cards(scrubber, card):
    assert len(re.sub(r"\D", "", card)) in (15, 16)
    assert_replaced(scrubber, card, "CARD")


@pytest.mark.parametrize("ip", [
    "203.0.113.57", "198.51.100.7", "2001:db8:85a3::8a2e:370:7334",
    "2001:0db8:0000:0000:0000:ff00:0042:8329", "fe80::1ff:fe23:4567:890a",
])
def test_ips(scrubber, ip):
    assert_replaced(scrubber, ip, "IP")


def test_ipv6_long_and_short_forms_share_a_placeholder(scrubber):
    out = scrub(scrubber, "from 2001:0db8:0000:0000:0000:ff00:0042:8329 then 2001:db8::ff00:42:8329")
    assert out == "from <IP_1> then <IP_1>"


@pytest.mark.parametrize("text,expected", [
    ("password: Tr0ub4dor&3", "password: <SECRET_1>"),
    ('"api_key": "q8Zt3LmP0wXy7Rk2Vb9N"', '"api_key": "<SECRET_1>"'),
    ("my pin is 4821", "my pin is <SECRET_1>"),
    ("key AKIAQ3EXAMPLE7ZT4WUV here", "key <SECRET_1> here"),
    ("export OPENAI_API_KEY=sk-proj-4f9Kx2LmQ8rT7vW1yZ3bN6cD", "export OPENAI_API_KEY=<SECRET_1>"),
    ("use sk-4f9Kx2LmQ8rT7vW1yZ3bN6cD0eF", "use <SECRET_1>"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJl",
     "Authorization: Bearer <SECRET_1>"),
    ("Authorization: bearer 7d9f0c1e2b3a4d5f6e7a8b9c", "Authorization: bearer <SECRET_1>"),
    ("token ghp_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A", "token <SECRET_1>"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nQyNTUxOQ\n"
     "-----END OPENSSH PRIVATE KEY-----\nthanks", "<SECRET_1>\nthanks"),
])
def test_secrets(scrubber, text, expected):
    assert scrub(scrubber, text) == expected


@pytest.mark.parametrize("url", [
    "postgres://svc_report:Wq7!zP2x@db.internal.example:5432/sales",
    "https://admin:hunter22@files.example.org/export.csv",
])
def test_url_credentials(scrubber, url):
    assert_replaced(scrubber, url, "URL_CREDENTIALS")


@pytest.mark.parametrize("address", [
    "742 Evergreen Terrace, Springfield, OR 97403",
    "350 Harbor Boulevard, Suite 3300, Austin, TX 78701",
    "18 Willow Lane, Apt 4B, Madison, WI 53703",
    "Flat 2, 27 Mill Road, Leeds LS6 2QJ",
    "41 Chestnut Street, Bristol BS8 1TH",
    "14 rue des Lilas, 69003 Lyon",
    "Lindenallee 27, 50968 Köln",
    "Berliner Straße 112a, 10115 Berlin",
    "Calle de Alcalá 48, 28014 Madrid",
    "Via Garibaldi 12, 10122 Torino",
    "上海市徐汇区漕溪北路595号",
])
def test_addresses(scrubber, address):
    assert_replaced(scrubber, address, "ADDRESS", template="Ship it to {} please.")


@pytest.mark.parametrize("text,expected", [
    ("Hi, my name is Ingrid Larsen and I need help.", "Hi, my name is <PERSON_1> and I need help."),
    ("my name is kwame mensah, order late", "my name is <PERSON_1>, order late"),
    ("I'm Oskar, calling about my order.", "I'm <PERSON_1>, calling about my order."),
    ("Hello, this is Amara Okonkwo from billing.", "Hello, this is <PERSON_1> from billing."),
    ("Dear Leila,\nyour refund is on its way.", "Dear <PERSON_1>,\nyour refund is on its way."),
    ("Ms. Brennan called, and Dr Nakamura too.", "Ms. <PERSON_1> called, and Dr <PERSON_2> too."),
    ("The parcel is late.\n\nBest regards,\nTomasz Kowalski",
     "The parcel is late.\n\nBest regards,\n<PERSON_1>"),
    ("Thanks, Zainab", "Thanks, <PERSON_1>"),
    ("Cheers,\nJohan", "Cheers,\n<PERSON_1>"),
    ("Mateo Silva here. Is my order late?", "<PERSON_1> here. Is my order late?"),
    ("Deliver to the depot. The recipient is Noor Haddad.",
     "Deliver to the depot. The recipient is <PERSON_1>."),
    ("Send it to Elena Moreau at 12 Ridge Road, Cardiff CF10 3AT.", "Send it to <PERSON_1> at <ADDRESS_1>."),
    ("Shipping to 9 Oak Lane, Glasgow G12 8QQ for Liam Brennan.", "Shipping to <ADDRESS_1> for <PERSON_1>."),
])
def test_person_names(scrubber, text, expected):
    assert scrub(scrubber, text) == expected


def test_a_detected_name_is_scrubbed_everywhere_in_the_text(scrubber):
    text = "Rafael asked again. Regards, Rafael Costa"
    assert scrub(scrubber, text) == "<PERSON_1> asked again. Regards, <PERSON_1>"


# ------------------------------------------------------------------------ negatives

@pytest.mark.parametrize("text", [
    "Order ORD-48213377 shipped; ticket #48213377, ref 4821337712.",
    "Total $1,250.00 (EUR 12.500,00), 1,250,000 units, 3.5% fee, 15 percent.",
    "Dates 2026-08-01, 01/08/2026, 01.08.2026, 20260801; times 10:22, 10:22:03.",
    "2026-08-01T10:22:03Z and 2026-08-01T10:22:03+02:00",
    "Versions 4.2.1, v10.0.19041, Python 3.11.7, release 1.2.3.4",
    "Quantities: 250 kg, 12 x 24 boxes, 4096 tokens, 70B params, 128k context",
    "SSN-looking but invalid: 000-12-3456, 666-12-3456, 912-45-6789, 123-00-4567",
    f"Luhn-invalid card {VISA[:15]}{(int(VISA[15]) + 1) % 10}",
    "not a card 1234 5678 9012 3456 and 0000 0000 0000 0000",
    "NINO-like but invalid: QQ 12 34 56 C, GB123456A",
    "I'm Sorry, I am Happy to help. This is Great. Dear Customer, Hello World!",
    "Thanks, that helps. Regards, Support Team",
    "token limit: 4096, max_tokens=512, the password is incorrect",
    "Use std::vector, ratio 3:2:1, ::1, build 10:20:30",
    "I have 3 more questions on the way; it takes 30 days.",
    "Scores 0.81 0.77 0.93 0.88; prices 0.99 0.50 0.25 0.10",
    "plain numbers 1234567, 7654321 and call 555-0199",
    "Ordered Orbit Smartwatch for Premium Support customers.",
])
def test_business_text_is_untouched(scrubber, text):
    assert scrub(scrubber, text) == text


def test_order_id_glued_to_a_valid_phone_is_not_a_phone(scrubber):
    assert scrub(scrubber, "ORD-2125550147 and order 2125550147") == "ORD-2125550147 and order 2125550147"


# ------------------------------------------------------- consistency and idempotence

def _record(**overrides):
    data = {
        "id": "r-1", "conversation_id": "c-1", "timestamp": "2026-08-01T10:22:03Z",
        "scenario": "tool_call",
        "messages": [
            {"role": "user", "content": "Hi, my name is Priya Sharma, mail PRIYA.S@example.com "
                                        "or call (212) 555-0147."},
            {"role": "assistant", "content": "Thanks Priya, I emailed priya.s@example.com."},
            {"role": "user", "content": "Also cc ops-lead@example.com please."},
        ],
        "reference": "Confirmation sent to priya.s@example.com; callback on 212-555-0147.",
        "rubric": {"type": "json", "key_facts": ["priya.s@example.com"],
                   "expected": {"to": "Priya.S@example.com", "cc": ["ops-lead@example.com"], "n": 2}},
        "tools": [{"name": "send_email", "description": "Sends mail as support@example.com",
                   "parameters": {"type": "object", "properties": {
                       "to": {"type": "string", "description": "e.g. ops-lead@example.com"}}}}],
    }
    data.update(overrides)
    return Record.model_validate(data)


def test_placeholders_are_consistent_across_every_field_of_a_record(scrubber):
    scrubbed, counts = scrubber.scrub_record(_record())
    m = scrubbed.messages
    assert m[0].content == "Hi, my name is <PERSON_1>, mail <EMAIL_1> or call <PHONE_1>."
    assert m[1].content == "Thanks <PERSON_1>, I emailed <EMAIL_1>."
    assert m[2].content == "Also cc <EMAIL_2> please."
    assert scrubbed.reference == "Confirmation sent to <EMAIL_1>; callback on <PHONE_1>."
    assert scrubbed.rubric.key_facts == ["<EMAIL_1>"]
    assert scrubbed.rubric.expected == {"to": "<EMAIL_1>", "cc": ["<EMAIL_2>"], "n": 2}
    tool = scrubbed.tools[0]
    assert tool["description"] == "Sends mail as <EMAIL_3>"
    assert tool["parameters"]["properties"]["to"] == {"type": "string", "description": "e.g. <EMAIL_2>"}
    assert tool["name"] == "send_email"
    assert counts == {"EMAIL": 9, "PERSON": 2, "PHONE": 2}


def test_other_record_fields_are_kept(scrubber):
    original = _record()
    scrubbed, _ = scrubber.scrub_record(original)
    for field in ("id", "conversation_id", "timestamp", "scenario"):
        assert getattr(scrubbed, field) == getattr(original, field)
    assert [m.role for m in scrubbed.messages] == [m.role for m in original.messages]


def test_numbering_restarts_per_record(scrubber):
    first, _ = scrubber.scrub_record(_record())
    second, _ = scrubber.scrub_record(_record(messages=[
        {"role": "user", "content": "write to ops-lead@example.com"}]))
    assert second.messages[0].content == "write to <EMAIL_1>"
    assert first.messages[2].content == "Also cc <EMAIL_2> please."


CORPUS = [
    "Call +49 (0)30 901820 or mail jane.doe@example.com; SSN 536-22-1845.",
    f"Card {VISA} from 203.0.113.57, password: Tr0ub4dor&3",
    "Ship to 742 Evergreen Terrace, Springfield, OR 97403.\nBest regards,\nTomasz Kowalski",
    "postgres://svc_report:Wq7!zP2x@db.internal.example:5432/sales and Dear Leila,",
    "Order ORD-48213377 for $1,250.00 on 2026-08-01, version 4.2.1",
]


@pytest.mark.parametrize("text", CORPUS)
def test_scrubbing_is_idempotent(scrubber, text):
    once = scrub(scrubber, text)
    assert scrub(scrubber, once) == once


def test_record_scrubbing_is_idempotent(scrubber):
    once, counts = scrubber.scrub_record(_record())
    twice, counts_again = scrubber.scrub_record(once)
    assert twice == once
    assert sum(counts.values()) > 0 and not counts_again


def test_existing_placeholders_are_never_reused_for_new_values(scrubber):
    out = scrub(scrubber, "Earlier <PHONE_1>; new number (212) 555-0147, mail <EMAIL_3>")
    assert out == "Earlier <PHONE_1>; new number <PHONE_2>, mail <EMAIL_3>"


def test_shared_mapping_across_calls(scrubber):
    mapping = PlaceholderMap()
    a = scrubber.scrub_text("mail JANE.DOE@example.com", mapping)
    b = scrubber.scrub_text("cc x.y@example.com and jane.doe@example.com", mapping)
    assert (a, b) == ("mail <EMAIL_1>", "cc <EMAIL_2> and <EMAIL_1>")
    assert mapping.counts["EMAIL"] == 3


# ------------------------------------------------------------------------ dictionary

def test_dictionary_terms_are_always_scrubbed(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("# people the patterns cannot know\nzorblax quint\nMirela\n"
                    "SECRET: Project Nightjar\n\n", encoding="utf-8")
    scrubber = Scrubber(PIIConfig(dictionary_path=path))
    out = scrubber.scrub_text("ZORBLAX QUINT met Mirela about project nightjar; Mirelas wrong.")
    assert out == "<PERSON_1> met <PERSON_2> about <SECRET_1>; Mirelas wrong."


def test_dictionary_applies_even_when_person_patterns_are_off(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("Mirela\n", encoding="utf-8")
    scrubber = Scrubber(PIIConfig(dictionary_path=path, kinds=frozenset({"EMAIL"})))
    assert scrubber.scrub_text("Mirela; my name is Ingrid") == "<PERSON_1>; my name is Ingrid"


def test_missing_dictionary_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="dictionary_path"):
        Scrubber(PIIConfig(dictionary_path=tmp_path / "absent.txt"))


# ----------------------------------------------------------------------------- config

def test_enabled_by_default_and_off_only_when_said():
    assert PIIConfig().enabled is True
    assert set(PIIConfig().kinds) == set(ALL_KINDS)
    off = Scrubber(PIIConfig(enabled=False))
    text = "mail jane.doe@example.com"
    assert off.scrub_text(text) == text
    record = _record()
    assert off.scrub_record(record) == (record, {})


def test_config_dumps_deterministically():
    assert PIIConfig(kinds=frozenset({"PHONE", "EMAIL", "CARD"})).model_dump(mode="json")["kinds"] == [
        "CARD", "EMAIL", "PHONE"]


def test_kinds_select_detectors():
    only_email = Scrubber(PIIConfig(kinds=frozenset({"EMAIL"})))
    assert only_email.scrub_text("jane@example.com (212) 555-0147") == "<EMAIL_1> (212) 555-0147"


@pytest.mark.parametrize("bad", [{"kinds": ["EMAIL", "FAX"]}, {"phone_regions": ["XX"]},
                                 {"enable": False}])
def test_config_is_validated(bad):
    with pytest.raises(ValidationError):
        PIIConfig.model_validate(bad)


def test_raw_values_never_reach_the_log(scrubber, caplog):
    caplog.set_level(logging.DEBUG, logger="pipeline")
    scrubber.scrub_record(_record())
    assert "EMAIL" in caplog.text
    for raw in ("example.com", "555-0147", "Priya", "Sharma"):
        assert raw not in caplog.text


# ------------------------------------------------------------------ cached, gated detection

GATE_TEXTS = [
    "Hi, I'm Jane Doe, call me on +44 20 7946 0958 or mail jane.doe@example.com.",
    "My SSN is 078-05-1120 and my card 4111 1111 1111 1111. Ship to 221B Baker Street, London NW1 6XE.",
    "Server fe80::1ff:fe23:4567:890a and 10.0.0.12 are down; token: sk-abcDEF1234567890ghijKLMN",
    "Dear Mr Smith, thanks for waiting. Kind regards, Anna Lee",
    "no digits, no at sign, no colon here at all",
    "Only a colon: here, and ::1 loopback",
    "Calle Mayor 5, 28013 Madrid / Hauptstraße 12a, 10115 Berlin / 北京市朝阳区建国路88号",
    "Order ORD-48213377 costs 12.50 EUR; version 1.2.3.4; call (617) 758-7913.",
    "Arabic-Indic digits ٠١٢٣٤٥٦٧٨٩ and fullwidth ０１２３４５６７８９ count as digits too",
    "password: hunter22 and Bearer abcdef123456 and user:pass@host",
    "Name: <PERSON_1>, phone <PHONE_2>, email x@y.io",
    # trigger words in other cases, and characters that match an ASCII letter only when
    # case is ignored (long s, Kelvin sign, dotless and dotted i): the prefilters let them by
    "BEST REGARDS,\nAnna Lee. MY NAME IS olga petrova. ATTN Piotr Nowak. DEAR Ms Kowalska",
    "\u017fincerely,\nAnna Lee",
    "Than\u212a you,\nAnna Lee",
    "my na\u0131me is ok; Th\u0130s \u0130s Anna Lee, PA\u017f\u017fWORD: hunter22, BEARER xyz123456789",
    "SSN 078 05 1120; NIE X-1234567-L; DNI 12345678Z; NIR 2 84 05 2A 123 456 78; ric 11010519491231002X",
    "12 bis RUE de la Paix, 75002 Paris; Berliner Str. 5; Via Roma 10; 東京都千代田区丸の内1-1-1",
]


def _ungated_spans(scrubber, text, monkeypatch):
    """Every detector run on every text, in the scrubber's order, with no prefilter at all
    (what _analyse must equal)."""
    from pipeline.calibration.pii.detectors import _contextual, identity
    from pipeline.calibration.pii.detectors.addresses import _addresses
    from pipeline.calibration.pii.detectors.contact import _emails, _ips, _url_credentials
    from pipeline.calibration.pii.detectors.identity import _cards, _cards_mixed, _national_ids
    from pipeline.calibration.pii.detectors.persons import _persons
    from pipeline.calibration.pii.detectors.phones import _phones
    from pipeline.calibration.pii.detectors.credentials import _secrets
    from pipeline.calibration.pii.detectors import cued, labelled, owned, shapes
    from pipeline.calibration.pii.prefilter import Scan, Needs
    from pipeline.calibration.pii.terms import term_spans

    monkeypatch.setattr(Needs, "met", lambda self, text, lowered: True)
    monkeypatch.setattr(identity, "count_digits", lambda text: 10**6)
    kinds = scrubber.config.kinds
    spans = []
    for kind, detector in (("EMAIL", _emails), ("URL_CREDENTIALS", _url_credentials),
                           ("SECRET", _secrets), ("NATIONAL_ID", _national_ids),
                           ("CARD", _cards), ("CARD", _cards_mixed),
                           (None, lambda t: _contextual(t, kinds, scrubber.config.phone_regions)),
                           ("IP", _ips)):
        if kind is None or kind in kinds:
            spans.extend(detector(text))
    addresses = tuple(_addresses(text))
    if "ADDRESS" in kinds:
        spans.extend(addresses)
    if "PERSON" in kinds:
        spans.extend(_persons(text, addresses))
    if "PHONE" in kinds:
        spans.extend(_phones(text, scrubber.config.phone_regions))
    for kind, detector in (("NATIONAL_ID", lambda t: shapes._formatted_ids(Scan(t, ()))),
                           ("DEVICE_ID", shapes._macs), ("WALLET", shapes._wallets),
                           ("LOCATION", shapes._coordinates), ("ID", cued._cued_ids), ("ID", labelled._labelled),
                           ("ID", owned._owned),
                           ("PERSON", cued._cued_names), ("PERSON", cued._names_by_script)):
        if kind in kinds:
            spans.extend(detector(text))
    spans.extend(term_spans(text, scrubber._dict_re, scrubber._dict_kinds))
    return tuple(spans)


@pytest.mark.parametrize("text", GATE_TEXTS)
def test_gated_detection_equals_running_every_detector(scrubber, text, monkeypatch):
    from pipeline.calibration.pii.placeholders import mask_placeholders

    masked = mask_placeholders(text)
    gated = scrubber._analyse(masked)[0]
    assert gated == _ungated_spans(scrubber, masked, monkeypatch)


def test_case_folding_exceptions_still_reach_the_patterns(scrubber):
    # "ſ" is matched by "s" when case is ignored, though "ſ".lower() is not "s"
    assert scrubber.scrub_text("\u017fincerely,\nAnna Lee") == "\u017fincerely,\n<PERSON_1>"
    assert scrubber.scrub_text("PA\u017f\u017fWORD: hunter22") == "PA\u017f\u017fWORD: <SECRET_1>"


def test_cached_detection_does_not_leak_between_records():
    first = Scrubber(PIIConfig())
    texts = GATE_TEXTS + GATE_TEXTS[::-1]
    fresh = [Scrubber(PIIConfig()).scrub_text(t) for t in texts]
    assert [first.scrub_text(t) for t in texts] == fresh
    assert [first.scrub_text(t) for t in texts] == fresh  # all from the cache now


# ------------------------------------------------------------------------ shortcuts stay exact

def test_a_name_learned_in_one_field_is_scrubbed_in_a_field_where_nothing_else_is_found(scrubber):
    data = {"messages": [{"role": "user", "content": "Hello, my name is Rafael Costa."},
                         {"role": "assistant", "content": "Rafael, your order has shipped."}]}
    scrubber.scrub_data(data)
    assert data["messages"][1]["content"] == "<PERSON_1>, your order has shipped."
    assert scrubber.scrub_text("Rafael, your order has shipped.") == "Rafael, your order has shipped."


def _affix_by_words(folded, starts, ends, inside):
    words = re.findall(r"[^\W\d_]+", folded)
    return any(w.startswith(tuple(starts)) or w.endswith(tuple(ends)) or any(i in w for i in inside)
               for w in words)


def test_word_affixes_equal_a_loop_over_the_words():
    import random

    from pipeline.calibration.pii.prefilter import word_affixes

    starts, ends, inside = ("kod", "nummer", "номер", "licen"), ("code", "zeichen", "nummer"), ("szám",)
    found = word_affixes(starts, ends, inside)
    rng = random.Random(7)
    alphabet = list("kodecnumerlizhäszám_ 1²-номер") + ["nummer", "code", "kod", "szám", "licen"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))).casefold()
        assert found(text) == _affix_by_words(text, starts, ends, inside), text
    with pytest.raises(ValueError, match="letters alone"):
        word_affixes(starts=("no.",))


@pytest.mark.parametrize("text, phones", [
    ("Server 93.13.225.147 is down", 0),  # a dotted quad that libphonenumber would read as a US number
    ("Card 4111 1111 1111 1111 on file", 0),
    ("Server 93.13.225.147 is down, call +1 303-232-1744 or (212) 502-7469", 2),
    ("Card 4111 1111 1111 1111, phone 07 94 05 49 11", 1),
])
def test_ip_and_card_runs_are_no_phones_but_their_neighbours_are(text, phones):
    from pipeline.calibration.pii.detectors.phones import _phones

    assert len(list(_phones(text, PIIConfig().phone_regions))) == phones
