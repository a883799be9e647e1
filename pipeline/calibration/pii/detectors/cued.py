"""Values introduced by a word that says what they are, in many languages, and names that their
script marks as names.

- **Identifiers after a cue**: "my SIN is …", "Mój numer PESEL to …", "マイナンバーは…", "VIN …",
  "IMEI …", "member ID …", "username …". The value is the first token within a short reach of the
  cue that looks like an identifier (a digit in it, or for account names any token); a value that
  a python-stdnum national-id validator accepts is a NATIONAL_ID, any other an ID. The cues name
  personal identifiers only: "order number", "ticket id" and "invoice no." are business facts and
  are not cues.
- **"My name is" in the 20 most-spoken languages** and more, in Latin and other scripts.
- **Names by script, with no cue**: two capitalised Cyrillic words in a row (Russian, Ukrainian
  and the other Cyrillic languages capitalise proper names only), a common Arabic given name and
  the word after it, a common Han surname followed by common given-name characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pipeline.calibration.pii.lexicon import USERNAME_WORDS
from pipeline.calibration.pii.detectors.labelled import COPULAS, national
from pipeline.calibration.pii.prefilter import Scan, Needs, cue_words
from pipeline.calibration.pii.registry import register
from pipeline.calibration.pii.spans import Span, strip_trailing

# --------------------------------------------------------------------------- identifiers
_ID_CUES = (  # what the label detector (labelled.py) cannot see: lower-case acronyms, inflected
    # and compound names of ids, and ids named in scripts without word boundaries
    # (acronyms that are words of some language — "nie", "sin", "pan", "rut", "tin" — only in capitals,
    # through the label detector)
    r"ssn", r"vin", r"imei", r"iccid", r"imsi", r"meid", r"mrn", r"aadhaa?r", r"nhs", r"cpf", r"cnpj",
    r"pesel", r"bsn", r"curp", r"dni", r"nif", r"ktp", r"cccd", r"cmnd", r"resident registration",
    r"licen[cs]e plate", r"medical record", r"henkilötunnu\w*", r"fødselsnummer\w*",
    r"personnummer\w*", r"kimlik", r"führerschein\w*", r"personalausweis\w*", r"kennzeichen",
    r"carte d'identité", r"documento de identidad", r"tessera sanitaria", r"patente", r"targa",
    r"инн", r"снилс", r"ідентифікаційний код", r"身份证", r"社保号", r"驾驶证",
    r"车牌", r"マイナンバー", r"免許証", r"保険証", r"주민등록번호", r"운전면허", r"외국인등록번호",
    r"תעודת (?:ה)?זהות", r"מספר זהות", r"رقم (?:الهوية|الجواز|البطاقة)", r"الرقم القومي", r"आधार",
    r"căn cước",
)
# bank accounts: digits only ("Account number ACC-101747" is a business system's key, not a bank's)
_DIGIT_CUES = (r"(?:bank )?account (?:number|no\.?)", r"routing(?: number)?", r"sort code", r"bsb",
               r"numéro de compte", r"número de cuenta", r"kontonummer", r"numer konta", r"номер счёта",
               r"номер счета", r"银行账号", r"口座番号", r"계좌번호")
# account names: any token after the cue (no digit needed)
_HANDLE_CUES = (
    r"user ?name", r"login", r"handle", r"instagram", r"twitter", r"telegram", r"skype",
    r"wechat(?: id)?", r"微信号?", r"line id", r"discord", r"snapchat", r"tiktok",
    r"maiden name", r"mädchenname", r"nom de jeune fille",
    *sorted({re.escape(w).replace("\\ ", " ") for ws in USERNAME_WORDS.values() for w in ws} - {"username", "login",
                                                                                              "handle"}),
)
_CUE_START = r"(?<![A-Za-zÀ-ÖØ-öø-ÿА-Яа-яЁё])"   # not inside a word (scripts without spaces: anywhere)
_CUE_END = r"(?![a-zà-öø-ÿа-яё]|-[a-zа-яё]{4})"
_ID_CUE_RE = re.compile(rf"(?i){_CUE_START}(?:{'|'.join(_ID_CUES)}){_CUE_END}")
_DIGIT_CUE_RE = re.compile(rf"(?i){_CUE_START}(?:{'|'.join(_DIGIT_CUES)}){_CUE_END}")
_HANDLE_CUE_RE = re.compile(rf"(?i){_CUE_START}(?:{'|'.join(_HANDLE_CUES)}){_CUE_END}")
_REACH = 32  # characters after the cue in which its value must start
_VALUE_RE = re.compile(r"(?<![A-Za-z0-9])(?:\d{2,}(?:[ .\-/]\d{2,})+(?:-[\dA-Za-z])?"
                       r"|[A-Za-z0-9][A-Za-z0-9_.\-/]*[A-Za-z0-9])(?![A-Za-z0-9])")
_HANDLE_FILLER_RE = re.compile(r"(?i)(?:[\s:#=\-–—]|\b(?:" + "|".join(sorted(
    COPULAS | {"is", "are", "es", "est", "ist", "é", "è", "on", "my", "mi", "meu", "mon"}, key=len, reverse=True))
    + r")\b|是|は|为|는|은)*")  # "Benutzername lautet …", "username: …"
_HANDLE_RE = re.compile(r"@?[^\W_][\w.\-]{1,40}[^\W_]")
def _reach(text: str, start: int) -> int:
    line_end = text.find("\n", start)
    return min(start + _REACH, len(text) if line_end < 0 else line_end)


def _cued_ids(text: str) -> Iterator[Span]:
    for cues, digits_only in ((_ID_CUE_RE, False), (_DIGIT_CUE_RE, True)):
        for cue in cues.finditer(text):
            for m in _VALUE_RE.finditer(text, cue.end(), _reach(text, cue.end())):
                end = strip_trailing(text, m.start(), m.end())
                value = text[m.start():end]
                compact = re.sub(r"[ .\-/]", "", value)
                if len(compact) < 5 or not any(c.isdigit() for c in compact):
                    continue
                if not (digits_only and not compact.isdigit()):
                    yield Span(m.start(), end, "NATIONAL_ID" if national(value) else "ID", compact.upper())
                break
    for cue in _HANDLE_CUE_RE.finditer(text):
        start = _HANDLE_FILLER_RE.match(text, cue.end()).end()
        m = _HANDLE_RE.match(text, start, _reach(text, cue.end()) + 16)
        if m:
            end = strip_trailing(text, m.start(), m.end())
            value = text[m.start():end]
            # an account name has a digit, "_", "@" or "."; a maiden name is a capitalised word
            # ("handle the request" is prose)
            if end - m.start() >= 3 and (re.search(r"[\d_@.]", value) or
                                         ("name" in cue.group().lower() and value[0].isupper())):
                yield Span(m.start(), end, "ID", text[m.start():end].casefold())


# ------------------------------------------------------------------ names after "my name is"
_WORD = r"[^\W\d_][^\W\d_'’.-]*(?:[-'’][^\W\d_]+)*"
_PARTICLE = r"(?:de|da|do|dos|das|del|della|di|van|von|der|den|ter|la|le|bin|ibn|al|el)"
_LATIN_CUES = (
    r"me llamo", r"mi nombre es", r"je m'appelle", r"je m’appelle", r"mon nom est", r"meu nome é",
    r"me chamo", r"mi chiamo", r"il mio nome è", r"ich heiße", r"ich heisse", r"mein name ist",
    r"nama saya", r"saya bernama", r"benim adım", r"adım", r"tên tôi là", r"tôi tên là",
    r"jina langu ni", r"naitwa", r"nazywam się", r"mam na imię", r"mijn naam is", r"ik heet",
    r"jeg hedder", r"jeg heter", r"jag heter", r"nimeni on", r"ang pangalan ko ay",
    r"my mother's maiden name is", r"maiden name is",
)
_LATIN_CUE_RE = re.compile(rf"(?i:(?<![^\W\d_])(?:{'|'.join(_LATIN_CUES)}))[ \t]+"
                           rf"(?P<name>{_WORD}(?:[ \t]+(?:{_PARTICLE}[ \t]+)?{_WORD}){{0,3}})")
_SCRIPT_CUES = (  # (cue, the name's characters, words at most)
    (r"меня\s+зовут|мене\s+звати|моё\s+имя|мое\s+имя|моє\s+ім'я", r"[А-ЯЁІЇЄҐа-яёіїєґ'’-]", 3),
    (r"اسمي|انا\s+اسمي|أنا\s+اسمي|میرا\s+نام|اسم\s+من|نام\s+من", r"[\u0621-\u06ff]", 2),
    (r"मेरा\s+नाम|मेरा\s+नाम\s+है|माझे\s+नाव|माझं\s+नाव", r"[\u0900-\u097f]", 2),
    (r"আমার\s+নাম", r"[\u0980-\u09ff]", 2),
    (r"నా\s+పేరు", r"[\u0c00-\u0c7f]", 2),
    (r"என்\s+பெயர்", r"[\u0b80-\u0bff]", 2),
    (r"ผมชื่อ|ฉันชื่อ|ดิฉันชื่อ|ชื่อ", r"[\u0e00-\u0e7f]", 1),
    (r"私の名前は|わたしの名前は|僕の名前は", r"[\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff]", 1),
    (r"με\s+λένε|το\s+όνομά\s+μου\s+είναι|λέγομαι", r"[Α-Ωα-ωάέήίόύώΆΈΉΊΌΎΏϊϋΐΰ]", 3),
    (r"제\s*이름은|내\s*이름은", r"[가-힣]", 1),
)
_SCRIPT_STOP = {"है", "हूँ", "हूं", "आहे", "ہے", "ہوں", "است", "هستم", "و", "من", "আছে", "です"}
_SCRIPT_RES = tuple((re.compile(rf"(?i:{cue})\s*(?P<name>{chars}+(?:\s+{chars}+){{0,{n - 1}}})"), n)
                    for cue, chars, n in _SCRIPT_CUES)
_JA_END_RE = re.compile(r"(?:です|と申します|といいます)$")
_KO_END_RE = re.compile(r"(?:입니다|이에요|예요|이고|라고)$")


def _cued_names(text: str) -> Iterator[Span]:
    for m in _LATIN_CUE_RE.finditer(text):
        words, end = m.group("name").split(), m.start("name")
        kept = 0
        for w in re.finditer(r"\S+", m.group("name")):
            word = w.group().rstrip(".,;:!?")
            if not word or not (word[0].isupper() or re.fullmatch(_PARTICLE, word, re.I)):
                break
            kept += 1
            end = m.start("name") + w.start() + len(word)
        if kept and words:
            yield Span(m.start("name"), end, "PERSON", " ".join(text[m.start("name"):end].split()).casefold())
    for pattern, _ in _SCRIPT_RES:
        for m in pattern.finditer(text):
            start, end = m.start("name"), m.start("name")
            for w in re.finditer(r"\S+", m.group("name")):
                word = _KO_END_RE.sub("", _JA_END_RE.sub("", w.group()))
                if word in _SCRIPT_STOP or (word.startswith("و") and len(word) > 3 and end > start):
                    break
                end = m.start("name") + w.start() + len(word)
                if len(word) < len(w.group()):
                    break
            if end > start:
                yield Span(start, end, "PERSON", " ".join(text[start:end].split()).casefold())


# ----------------------------------------------------------------- names by script, no cue
_CYR_UP, _CYR_LOW = "А-ЯЁІЇЄҐ", "а-яёіїєґ"
_CYRILLIC_PAIR_RE = re.compile(rf"(?<![{_CYR_UP}{_CYR_LOW}])[{_CYR_UP}][{_CYR_LOW}]+"
                               rf"(?:\s+[{_CYR_UP}][{_CYR_LOW}]+){{1,2}}(?![{_CYR_UP}{_CYR_LOW}])")
_ARABIC_GIVEN = (
    "محمد", "أحمد", "احمد", "علي", "حسن", "حسين", "عمر", "خالد", "يوسف", "إبراهيم", "ابراهيم", "عبدالله",
    "عبد الله", "مصطفى", "محمود", "سعيد", "سلمان", "فهد", "طارق", "ياسر", "كريم", "سامي", "عادل", "ماجد",
    "فيصل", "ناصر", "حمزة", "بلال", "زياد", "رامي", "وليد", "هشام", "جمال", "عثمان", "سليمان", "إسماعيل",
    "فاطمة", "عائشة", "مريم", "زينب", "خديجة", "نور", "سارة", "ليلى", "هدى", "أمينة", "رنا", "ريم", "سلمى",
    "ياسمين", "هند", "دعاء", "منى", "نادية", "سعاد", "رقية", "آمنة", "لينا", "دانة", "جميلة", "عمران",
)
_ARABIC_NAME_RE = re.compile(rf"(?<![\u0621-\u064a])(?:{'|'.join(_ARABIC_GIVEN)})\s+[\u0621-\u064a]{{2,}}"
                             r"(?![\u0621-\u064a])")
# the commonest Han surnames, and characters common in given names
_HAN_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程魏苏吕丁任沈姚"
    "卢姜崔钟谭陆汪范廖石金韦贾夏付方邹熊白孟秦邱侯江尹薛闫段雷龙黎史陶贺毛郝顾龚邵万覃武钱戴严莫孔向常汤"
    "康易乔赖文"
)
_HAN_GIVEN = (
    "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉萍红娥玲芬燕彬鹏辉斌宇浩凯健俊帆帅旭宁龙林欣怡佳琪"
    "婷雪慧晶颖倩琳蕾薇丹建国志新海波峰东文军兵春梅兰凤云飞鑫亮晨阳子轩梓涵博睿宏小立永福德荣成"
)
_HAN_NAME_RE = re.compile(rf"(?<![{_HAN_SURNAMES}])[{_HAN_SURNAMES}][{_HAN_GIVEN}]{{1,2}}(?![{_HAN_GIVEN}])")


def _names_by_script(text: str) -> Iterator[Span]:
    for pattern in (_CYRILLIC_PAIR_RE, _ARABIC_NAME_RE, _HAN_NAME_RE):
        for m in pattern.finditer(text):
            yield Span(m.start(), m.end(), "PERSON", " ".join(m.group().split()).casefold())


def _has_non_ascii(scan: Scan) -> bool:
    return not scan.text.isascii()


_ID_GATE, _HANDLE_GATE = cue_words(_ID_CUES + _DIGIT_CUES), cue_words(_HANDLE_CUES)


def _may_cue_id(scan: Scan) -> bool:
    """An identifier cue with a digit somewhere, or an account-name cue."""
    return (scan.digits > 0 and _ID_GATE(scan)) or _HANDLE_GATE(scan)


register("cued_id", "ID", _may_cue_id, lambda scan: _cued_ids(scan.text))
# every Latin cue is a fixed phrase: its presence in the lower-cased text is the gate
_LATIN_NEEDS = Needs(tuple(cue.replace("\\", "") for cue in _LATIN_CUES), ignore_case=True)


def _may_cue_name(scan: Scan) -> bool:
    return not scan.text.isascii() or _LATIN_NEEDS.met(scan.text, scan.lowered)


register("cued_name", "PERSON", _may_cue_name, lambda scan: _cued_names(scan.text), teaches_names=True)
register("name_by_script", "PERSON", _has_non_ascii, lambda scan: _names_by_script(scan.text),
         teaches_names=True)
