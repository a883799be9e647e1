"""PII batteries: sentences that carry a personal value, and the values that must not survive.

NAMED holds the kinds a user reported surviving the split (names after "my name is" in the
most-spoken languages, context-free names in Cyrillic, Han and Arabic script, national ids with
published checksums, Korean resident registration numbers, MAC addresses, cloud secret keys,
crypto-wallet addresses, coordinates), each with a cue and, where the value has a shape of its
own, bare. HELD_OUT holds kinds no detector was written for (licences, plates, vehicle and
device numbers, records, accounts, handles): it measures how far coverage reaches beyond the
kinds someone thought of. Both are used by tests/calibration/test_pii_batteries.py and
benchmarks/pii_frameworks.py.

Checksummed values are made by a seeded search over python-stdnum's own validators, so each one
is valid by the standard that defines it.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    kind: str
    text: str
    values: tuple[str, ...]   # none of these may appear in the scrubbed text
    cue: bool                 # a word in the sentence introduces the value


def _valid(module: str, shape: str, seed: int) -> str:
    """A value of `shape` (# a digit, A a capital letter, other characters kept) that
    stdnum.<module> accepts, found by a seeded search."""
    mod = importlib.import_module(f"stdnum.{module}")
    rng = random.Random(seed)
    for _ in range(200_000):
        value = "".join(rng.choice("0123456789") if c == "#" else
                        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") if c == "A" else c for c in shape)
        if mod.is_valid(value):
            return value
    raise RuntimeError(f"no valid {module} value of shape {shape!r}")


def _base58check(version: int, seed: int) -> str:
    import hashlib

    rng = random.Random(seed)
    payload = bytes([version]) + bytes(rng.randrange(256) for _ in range(20))
    raw = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    n, out = int.from_bytes(raw, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = alphabet[r] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def _hex(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _b64ish(n: int, seed: int) -> str:
    rng = random.Random(seed)
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(rng.choice(chars) for _ in range(n))


# "my name is" and a name, in the most-spoken languages (and German, Polish, Ukrainian, Greek)
_CUES = [
    ("en", "Hi, my name is Olivia Bennett and I need a refund.", "Olivia Bennett"),
    ("zh", "你好，我叫王小明，想查一下订单。", "王小明"),
    ("hi", "नमस्ते, मेरा नाम राहुल शर्मा है और मुझे मदद चाहिए।", "राहुल शर्मा"),
    ("es", "Hola, me llamo Lucía Fernández y tengo un problema con el pedido.", "Lucía Fernández"),
    ("fr", "Bonjour, je m'appelle Élodie Marchand, ma commande n'est pas arrivée.", "Élodie Marchand"),
    ("ar", "مرحبا، اسمي خالد الحربي وأريد إلغاء الطلب.", "خالد الحربي"),
    ("bn", "নমস্কার, আমার নাম সুমন দাস, আমার অর্ডার আসেনি।", "সুমন দাস"),
    ("pt", "Olá, meu nome é João Carvalho e preciso de ajuda.", "João Carvalho"),
    ("ru", "Здравствуйте, меня зовут Иван Петров, заказ не пришёл.", "Иван Петров"),
    ("ru", "Меня зовут Иван Петров.", "Иван Петров"),
    ("ur", "السلام علیکم، میرا نام عمران خان ہے اور مجھے رقم واپس چاہیے۔", "عمران خان"),
    ("id", "Halo, nama saya Budi Santoso, pesanan saya belum sampai.", "Budi Santoso"),
    ("de", "Guten Tag, ich heiße Jürgen Hoffmann und brauche eine Rechnung.", "Jürgen Hoffmann"),
    ("de", "Mein Name ist Katrin Vogel, bitte rufen Sie zurück.", "Katrin Vogel"),
    ("ja", "こんにちは、私の名前は佐藤健です。注文について質問があります。", "佐藤健"),
    ("tr", "Merhaba, benim adım Mehmet Yılmaz, siparişim gelmedi.", "Mehmet Yılmaz"),
    ("vi", "Xin chào, tên tôi là Nguyễn Văn An, tôi cần hỗ trợ.", "Nguyễn Văn An"),
    ("ko", "안녕하세요, 제 이름은 김민준입니다. 환불 요청드립니다.", "김민준"),
    ("it", "Buongiorno, mi chiamo Giulia Romano e vorrei un rimborso.", "Giulia Romano"),
    ("fa", "سلام، اسم من علی رضایی است و سفارشم نرسیده.", "علی رضایی"),
    ("sw", "Habari, jina langu ni Amani Mwangi, naomba msaada.", "Amani Mwangi"),
    ("mr", "नमस्कार, माझे नाव सचिन पाटील आहे.", "सचिन पाटील"),
    ("te", "నమస్తే, నా పేరు రవి కుమార్.", "రవి కుమార్"),
    ("ta", "வணக்கம், என் பெயர் அருண் குமார்.", "அருண் குமார்"),
    ("pl", "Dzień dobry, nazywam się Krzysztof Nowak i mam pytanie.", "Krzysztof Nowak"),
    ("uk", "Доброго дня, мене звати Олена Коваленко.", "Олена Коваленко"),
    ("nl", "Hallo, mijn naam is Sanne de Vries en ik wil retourneren.", "Sanne de Vries"),
    ("el", "Γεια σας, με λένε Νίκος Παπαδόπουλος.", "Νίκος Παπαδόπουλος"),
    ("th", "สวัสดีครับ ผมชื่อสมชาย ใจดี ต้องการคืนสินค้า", "สมชาย"),
]

# a person named with no cue at all, in scripts without (or with other) capitalisation rules
_BARE_NAMES = [
    ("cyrillic", "Иван Петров оформил заказ вчера вечером.", "Иван Петров"),
    ("cyrillic", "Передайте Анне Смирновой, что возврат одобрен.", "Анне Смирновой"),
    ("cyrillic", "Звонил Сергей Кузнецов по поводу доставки.", "Сергей Кузнецов"),
    ("han", "王伟昨天提交了退款申请。", "王伟"),
    ("han", "请把发票寄给李娜，谢谢。", "李娜"),
    ("han", "客户张建国说包裹破损了。", "张建国"),
    ("arabic", "طلب محمد العلي استرداد المبلغ أمس.", "محمد العلي"),
    ("arabic", "اتصلت فاطمة الزهراء بخصوص الشحنة.", "فاطمة الزهراء"),
]


def _named() -> list[Case]:
    cases = [Case("name_after_cue", t, (v,), True) for _, t, v in _CUES]
    cases += [Case(f"bare_name_{s}", t, (v,), False) for s, t, v in _BARE_NAMES]
    rrn = _valid("kr.rrn", "######-#######", 1).split("-")
    rrn_a, rrn_b = "-".join(rrn), _valid("kr.rrn", "#############", 2)
    cases += [Case("kr_rrn", f"주민등록번호는 {rrn_a} 입니다.", (rrn_a,), True),
              Case("kr_rrn", f"Resident registration no. {rrn_b}, please update.", (rrn_b,), True),
              Case("kr_rrn", f"{rrn_a} 확인 부탁드립니다.", (rrn_a,), False)]
    cases += [Case("mac", "My router's MAC address is 3C:5A:B4:1F:9E:07.", ("3C:5A:B4:1F:9E:07",), True),
              Case("mac", "Device 00-1B-63-84-45-E6 keeps dropping the connection.", ("00-1B-63-84-45-E6",), False),
              Case("mac", "Whitelisted 0025.96ff.fe12 on the switch.", ("0025.96ff.fe12",), False)]
    key_a, key_b = _b64ish(40, 3), _b64ish(40, 4)
    cases += [Case("cloud_key", f"aws_secret_access_key = {key_a}", (key_a,), True),
              Case("cloud_key", f"Here are the creds: AKIAZ7Q3VJ5D2LXKM4PA / {key_b}",
                   ("AKIAZ7Q3VJ5D2LXKM4PA", key_b), False),
              Case("cloud_key", "my access key id is AKIAIOSFODNN7EXAMPLF", ("AKIAIOSFODNN7EXAMPLF",), True)]
    ids = [  # (stdnum module, shape, the sentence with {} for the value)
        ("br.cpf", "###.###.###-##", "Meu CPF é {}."),
        ("br.cpf", "###.###.###-##", "Segue o documento {} para cadastro."),
        ("pl.pesel", "###########", "Mój numer PESEL to {}."),
        ("nl.bsn", "#########", "Mijn BSN is {}."),
        ("it.codicefiscale", "AAAAAA##A##A###A", "Il mio codice fiscale è {}."),
        ("it.codicefiscale", "AAAAAA##A##A###A", "Allego {} come richiesto."),
        ("se.personnummer", "######-####", "Mitt personnummer är {}."),
        ("fi.hetu", "######-###A", "Henkilötunnukseni on {}."),
        ("no.fodselsnummer", "###########", "Fødselsnummeret mitt er {}."),
        ("tr.tckimlik", "###########", "T.C. kimlik numaram {}."),
        ("za.idnr", "#############", "My SA ID number is {}."),
        ("mx.curp", "AAAA######AAAAAA##", "Mi CURP es {}."),
        ("cl.rut", "########-#", "Mi RUT es {}."),
        ("ca.sin", "### ### ###", "My SIN is {}."),
        ("de.idnr", "###########", "Meine Steuer-ID lautet {}."),
        ("gb.nhs", "### ### ####", "NHS number {} for the appointment."),
        ("il.idnr", "#########", "מספר תעודת הזהות שלי {}."),
        ("ro.cnp", "#############", "CNP-ul meu este {}."),
        ("jp.in_", "############", "マイナンバーは{}です。"),
        ("ru.inn", "############", "Мой ИНН {}."),
    ]
    for i, (module, shape, sentence) in enumerate(ids):
        value = _valid(module, shape, 10 + i)
        cases.append(Case(f"national_id:{module}", sentence.format(value), (value,),
                          not sentence.startswith(("Segue", "Allego"))))
    btc, bech = _base58check(0, 5), "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
    eth = "0x" + _hex(40, 6)
    cases += [Case("wallet", f"Send the refund to my bitcoin address {btc}.", (btc,), True),
              Case("wallet", f"Paid from {bech} yesterday.", (bech,), False),
              Case("wallet", f"Wallet: {eth}", (eth,), True),
              Case("wallet", f"Transfer went to {eth} but never arrived.", (eth,), False)]
    cases += [Case("coordinates", "I live at 48.858370, 2.294481 if the courier needs it.",
                   ("48.858370, 2.294481",), True),
              Case("coordinates", "Drop-off at -33.8688197,151.2092955 please.", ("-33.8688197,151.2092955",), False),
              Case("coordinates", "My GPS position: 40°44′54″N 73°59′08″W.", ("40°44′54″N 73°59′08″W",), True)]
    return cases


def _held_out() -> list[Case]:
    vin = "1HGCM82633A004352"          # a valid ISO 3779 check digit (position 9)
    imei = _valid("imei", "###############", 7)
    return [
        Case("drivers_licence", "My driver's license number is D4127893, issued in California.", ("D4127893",), True),
        Case("drivers_licence", "Führerscheinnummer: B072RRE2I55", ("B072RRE2I55",), True),
        Case("plate", "My license plate is 7ABC123, it's a grey sedan.", ("7ABC123",), True),
        Case("vin", f"The car's VIN is {vin}.", (vin,), True),
        Case("imei", f"The phone's IMEI is {imei}.", (imei,), True),
        Case("medical_record", "Patient MRN 00482913 needs the invoice.", ("00482913",), True),
        Case("insurance", "Meine Krankenversichertennummer ist A123456780.", ("A123456780",), True),
        Case("insurance", "My health insurance member ID is XQH847120394.", ("XQH847120394",), True),
        Case("employee_id", "My employee ID is E-448812.", ("E-448812",), True),
        Case("student_id", "Student number 20194471 for the discount.", ("20194471",), True),
        Case("username", "My username is jdoe_1987 on your site.", ("jdoe_1987",), True),
        Case("password", "my password is Tr0ub4dor&3 and it stopped working", ("Tr0ub4dor&3",), True),
        Case("bank_account", "Account number 000123456789, routing 021000021.", ("000123456789", "021000021"), True),
        Case("maiden_name", "My mother's maiden name is Kowalski.", ("Kowalski",), True),
        Case("address_de", "Ich wohne in der Lindenstraße 12, 10115 Berlin.", ("Lindenstraße 12",), True),
        Case("address_es", "Vivo en Calle de Alcalá 45, 28014 Madrid.", ("Calle de Alcalá 45",), True),
        Case("handle", "My Instagram is @jane.doe88, message me there.", ("@jane.doe88",), True),
        Case("handle", "我的微信号是 wxid_k2j8f7d9", ("wxid_k2j8f7d9",), True),
        Case("sim", "SIM ICCID 8944100000000000007 was deactivated.", ("8944100000000000007",), True),
        Case("serial", "Serial number C02XG2JHJG5H, bought last May.", ("C02XG2JHJG5H",), True),
    ]


NAMED: list[Case] = _named()
HELD_OUT: list[Case] = _held_out()


def survivors(scrub, cases: list[Case]) -> list[tuple[Case, str]]:
    """(case, scrubbed text) for each case where some value is still in the scrubbed text."""
    out = []
    for case in cases:
        text = scrub(case.text)
        if any(v in text for v in case.values):
            out.append((case, text))
    return out
