"""The noun that a number belongs to: business nouns of many languages keep their keys, a number
word of any language introduces a personal value, and the rules that read them (nouns.py,
labelled.py) — each case here is one that the rule changes."""

import pytest

from pipeline.calibration.pii import PIIConfig, Scrubber
from pipeline.calibration.pii.lexicon import BUSINESS_NOUNS, NUMBER_WORDS
from pipeline.calibration.pii.nouns import clause_before, is_business_word, named_by_business


@pytest.fixture(scope="module")
def scrub():
    return Scrubber(PIIConfig()).scrub_text


def test_every_language_has_both_lists():
    assert set(NUMBER_WORDS) == set(BUSINESS_NOUNS)
    assert len(NUMBER_WORDS) >= 40
    assert all(NUMBER_WORDS[lang] and BUSINESS_NOUNS[lang] for lang in NUMBER_WORDS)


@pytest.mark.parametrize("word", ["account", "contract", "policy", "card", "certificate", "customer", "serial",
                                  "booking", "reservation", "счёта", "kundennummer"])
def test_what_names_a_person_or_their_relationship_is_no_business_noun(word):
    assert not is_business_word(word)


def test_an_inflected_business_noun_is_one_and_a_longer_word_is_not():
    assert is_business_word("tichetul")      # Romanian: the ticket
    assert is_business_word("обращению")     # Russian: to the request
    assert not is_business_word("participant")  # not "partij" (a batch) inflected


def test_an_abbreviation_dot_does_not_end_the_clause():
    text = "Meine Bestellung Nr. 304-7712209 ist unvollständig."
    assert clause_before(text, text.index("304")) == "Meine Bestellung Nr. "
    assert clause_before("Done. Next 12345", 11) == " Next "


@pytest.mark.parametrize("text,value", [
    ("Le ticket n° SAV-40921 est toujours ouvert.", "SAV-40921"),
    ("Paczka InPost o numerze 620012345678 utknęła.", "620012345678"),
    ("Comanda mea nr. 7712093 a venit.", "7712093"),
    ("订单号 202612040001 显示已发货", "202612040001"),
    ("คำสั่งซื้อเลขที่ 2024051877 ของผม", "2024051877"),
])
def test_a_business_noun_names_the_value(text, value):
    assert named_by_business(text, text.index(value))


@pytest.mark.parametrize("text,value", [
    ("배송 기사님께 공동현관 출입 비밀번호 #1357* 를 전달해 주세요.", "#1357*"),  # "delivery" three words back
    ("Sąd prosi o fakturę do sprawy o sygnaturze akt I C 1187/25.", "1187/25"),
])
def test_a_business_noun_further_back_does_not(text, value):
    assert not named_by_business(text, text.index(value))


@pytest.mark.parametrize("text", [
    "Le ticket n° SAV-40921 est toujours ouvert.",       # a typed key after a business noun
    "Meine Bestellung Nr. 304-7712209 ist unvollständig.",  # not a phone after "Bestellung Nr."
    "The app crashes with code 0x80070005 on start.",     # a program's status code
    "Đơn hàng số 88120339 bị giao nhầm màu, mã sản phẩm SP-2210.",  # the noun after the label
    "注文番号 250-7781203-4415 の商品。追跡番号は 4471-2290-8812 です。",  # not a national id
])
def test_business_keys_stay(scrub, text):
    assert scrub(text) == text


@pytest.mark.parametrize("text,value", [
    ("Die Hundesteuermarke Nr. 0473 ist verloren gegangen.", "0473"),  # "Nr." does not end the sentence
    ("o contrato é o nº 0029384712-5.", "0029384712-5"),
    ("my operator ID GBR-OP-7XK2M9QP4RTE is invalid", "7XK2M9QP4RTE"),  # "ID" is a label, no acronym
    ("серія та номер свідоцтва: І-БК 482917.", "482917"),  # a series before the number
    ("ڈومیسائل سرٹیفکیٹ نمبر D-118276/2022 کی تصدیق", "D-118276/2022"),  # Urdu "number"
    ("我個投注戶口號碼係77432019，", "77432019"),  # traditional Chinese "number"
])
def test_number_words_of_other_languages_introduce_a_value(scrub, text, value):
    assert value not in scrub(text)


@pytest.mark.parametrize("text,value", [
    ("mijn DigiD-gebruikersnaam is tulpfiets81.", "tulpfiets81"),  # a platform's user name, Dutch
    ("Mein Benutzername lautet kat.ze_77, bitte prüfen.", "kat.ze_77"),
    ("うちの太陽光発電の設備IDはF382016B47です。", "F382016B47"),  # "ID" inside a script without spaces
    ("我的B站UID是358120947，绑定失败。", "358120947"),
    ("я указал свой УИН ГТО 21-77-0012345, но", "21-77-0012345"),  # a Cyrillic acronym is a label too
])
def test_usernames_and_glued_or_cyrillic_acronyms(scrub, text, value):
    assert value not in scrub(text)


def test_a_cyrillic_business_acronym_keeps_its_key(scrub):
    text = "Замовлення № 204513, ТТН Нової пошти 20450012345678, посилка досі у відділенні № 31."
    assert scrub(text) == text
