"""Synthetic personal data planted in the demo logs, so that scrubbing has real work to do.

Every value is invented, drawn from a seeded RNG, and in a format a real log would hold. The
scrubber (pipeline.calibration.pii) must never import this module: it has to find PII it has
not been told about.
"""

from __future__ import annotations

import random

FIRST = ("Maria", "Wei", "Aisha", "Lukas", "Priya", "Kenji", "Olga", "Mateo", "Fatima", "Tomasz",
         "Chloe", "Arjun", "Ingrid", "Kwame", "Sofia", "Liam", "Noor", "Hiroshi", "Elena", "Diego",
         "Amara", "Johan", "Mei", "Rafael", "Zainab", "Pierre", "Anya", "Samuel", "Leila", "Oskar")
LAST = ("Gonzalez", "Zhang", "Rahman", "Becker", "Sharma", "Tanaka", "Ivanova", "Silva", "Haddad",
        "Nowak", "Dubois", "Patel", "Larsen", "Mensah", "Rossi", "Okafor", "Lindqvist", "Moreau",
        "Kowalski", "Nakamura", "Fernandes", "Schmidt", "Adeyemi", "Novak", "Brennan", "Costa")
MAIL_DOMAINS = ("examplemail.com", "inbox.net", "corp-mail.org", "post.example.de",
                "mailbox.co.uk", "fastmail.example")
US_STREETS = ("Maple", "Oak", "Cedar", "Harbor", "Mill", "Sunset", "Lakeview", "Willow", "Ridge",
              "Chestnut")
US_TYPES = ("Street", "Avenue", "Road", "Lane", "Boulevard", "Drive")
US_CITIES = (("Portland", "OR", "972"), ("Austin", "TX", "787"), ("Denver", "CO", "802"),
             ("Columbus", "OH", "432"), ("Madison", "WI", "537"))
UK_PLACES = (("Leeds", "LS"), ("Bristol", "BS"), ("Glasgow", "G"), ("Cardiff", "CF"))
DE_PLACES = (("Berlin", "10"), ("Hamburg", "20"), ("München", "80"), ("Köln", "50"))
DE_STREETS = ("Hauptstraße", "Bahnhofstraße", "Gartenweg", "Schillerstraße", "Lindenallee")


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def email(rng: random.Random, name: str | None = None) -> str:
    first, last = (name or person(rng)).lower().split(" ", 1)
    style = rng.randrange(3)
    local = (f"{first}.{last}" if style == 0 else f"{first[0]}{last}{rng.randint(1, 99)}"
             if style == 1 else f"{last}_{first}")
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def _digits(rng: random.Random, n: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(n))


def phone(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:  # US, national
        return f"({rng.choice(('212', '415', '646', '312', '617'))}) {rng.randint(201, 989)}-{_digits(rng, 4)}"
    if kind == 1:  # US, international
        return f"+1 {rng.choice(('206', '303', '503', '718'))}-{rng.randint(201, 989)}-{_digits(rng, 4)}"
    if kind == 2:  # UK mobile
        return f"+44 7{rng.randint(400, 999)} {_digits(rng, 6)}"
    if kind == 3:  # Germany, Berlin landline
        return f"+49 30 {rng.randint(2, 9)}{_digits(rng, 7)}"
    if kind == 4:  # China mobile
        return f"+86 1{rng.choice('3589')}{rng.randrange(10)} {_digits(rng, 4)} {_digits(rng, 4)}"
    return f"0{rng.randint(6, 7)} {' '.join(_digits(rng, 2) for _ in range(4))}"  # France mobile


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    from stdnum import luhn

    body = prefix + _digits(rng, length - len(prefix) - 1)
    return body + luhn.calc_check_digit(body)


def card(rng: random.Random) -> str:
    if rng.random() < 0.2:  # 15-digit, 4-6-5 grouping
        n = _luhn_complete(rng.choice(("34", "37")), 15, rng)
        return f"{n[:4]} {n[4:10]} {n[10:]}"
    n = _luhn_complete(rng.choice(("4", "51", "53", "55")), 16, rng)
    sep = rng.choice((" ", "-", ""))
    return sep.join(n[i:i + 4] for i in range(0, 16, 4))


def _cn_resident_id(rng: random.Random) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    body = (rng.choice(("110101", "310104", "440305", "510107")) +
            f"{rng.randint(1960, 2004)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" +
            _digits(rng, 3))
    check = "10X98765432"[sum(int(c) * w for c, w in zip(body, weights)) % 11]
    return body + check


def national_id(rng: random.Random) -> str:
    kind = rng.randrange(4)
    if kind == 0:  # US SSN, valid area
        return f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
    if kind == 1:  # UK National Insurance number
        return (f"{rng.choice(('AB', 'CE', 'JK', 'PR', 'WL'))} {_digits(rng, 2)} {_digits(rng, 2)} "
                f"{_digits(rng, 2)} {rng.choice('ABCD')}")
    if kind == 2:
        return _cn_resident_id(rng)
    number = rng.randint(10000000, 99999999)  # Spanish DNI
    return f"{number}{'TRWAGMYFPDXBNJZSQVHLCKE'[number % 23]}"


def address(rng: random.Random) -> str:
    kind = rng.randrange(3)
    if kind == 0:
        city, state, zip3 = rng.choice(US_CITIES)
        unit = f", Apt {rng.randint(1, 40)}" if rng.random() < 0.3 else ""
        return (f"{rng.randint(10, 9899)} {rng.choice(US_STREETS)} {rng.choice(US_TYPES)}{unit}, "
                f"{city}, {state} {zip3}{_digits(rng, 2)}")
    if kind == 1:
        city, area = rng.choice(UK_PLACES)
        return (f"{rng.randint(1, 180)} {rng.choice(US_STREETS)} {rng.choice(('Road', 'Lane', 'Street'))}, "
                f"{city} {area}{rng.randint(1, 20)} {rng.randint(1, 9)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"
                f"{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}")
    city, plz = rng.choice(DE_PLACES)
    return f"{rng.choice(DE_STREETS)} {rng.randint(1, 120)}, {plz}{_digits(rng, 3)} {city}"


def ip_address(rng: random.Random) -> str:
    if rng.random() < 0.8:
        first = rng.choice((81, 93, 145, 176, 203))
        return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return f"2001:db8:{rng.randint(0, 0xffff):x}::{rng.randint(1, 0xffff):x}"


def secret(rng: random.Random) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    body = "".join(rng.choice(alphabet) for _ in range(32))
    return rng.choice((f"sk-live-{body}", f"AKIA{body[:16].upper()}", f"ghp_{body}{body[:4]}"))
