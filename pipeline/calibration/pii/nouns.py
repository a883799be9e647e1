"""The words that say what a value is: label nouns ("number", "Nr.", "رقم", "番号"), which
introduce an identifier, and business nouns ("order", "ticket", "commande", "注文"), which say the
identifier is the business's own reference to a transaction, an event or a thing for sale, not a
person's. The lists of many languages come from `lexicon.py`, a language at a time; the detectors
(labelled.py, owned.py, phones.py) read them from here."""

from __future__ import annotations

import re

from pipeline.calibration.pii.lexicon import BUSINESS_NOUNS, NUMBER_WORDS

# label nouns, found as whole words (case-folded); compounds where the language writes them
# ("Zählernummer", "pasnummer") by their ending, inflected forms ("numaram", "номера") by their stem
LABEL_WORDS = frozenset({w.casefold() for w in """
number id code key pin password reference passcode serial ssid nr kennung passwort numero numéro digicode
clé identifiant número código clave chave senha codice chiave sleutel numer nomor klucz hasło číslo čísla nº
αριθμός κωδικός số mã серия nomer пароль # №
""".split()})  # compared case-folded (a final "ς" folds to "σ")
LABEL_STEMS = ("kod", "sygnatur", "numara", "şifre", "nummer", "номер", "код", "ключ")
LABEL_ENDINGS = ("nummer", "zeichen", "schlüssel", "code")
LABEL_INFIXES = ("szám",)  # Hungarian number, inflected inside a word: "ügyfélszámom" (my customer number)
LABEL_BEFORE = {"no": ".:", "n": "°º"}  # "No." and "n°" are labels, "no" and "n" alone are not
# labels written abbreviated, whose dot ends the label and not the sentence ("Nr. 0473")
ABBREVIATED = frozenset({"nr", "núm", "num", "nro", "nrs", "č", "čís", "sz", "ном", "br", "št", "nb", "ref", "reg"})
SCRIPT_LABELS = (r"מספר", r"קוד", r"নম্বর", r"নং", r"หมายเลข", r"รหัส", r"เลขที่", r"号码", r"编号", r"密码",
                  r"账号", r"号", r"码", r"番号", r"コード", r"パスワード", r"暗証番号", r"번호", r"코드",
                  r"비밀번호", r"رقم", r"كود", r"رمز", r"नंबर", r"संख्या", r"कोड", r"आईडी")
# business nouns: a label they qualify introduces a business key, not a personal value
BUSINESS = frozenset({w.casefold() for w in """
order orders invoice invoices tracking track trace shipment shipping delivery parcel package sku product
model item items part article catalog catalogue version build release error status http exit return
returns rma promo coupon discount voucher gift country area zip postal post batch lot purchase po
transaction payment receipt refund ticket incident request support project task issue bug job run
commit page line room table step option tier store shop branch warehouse bin pallet gate flight
assistenza assistance asistencia assistência
bestellung rechnung sendung lieferung artikel fehler gutschein rabatt filiale lager charge
commande facture suivi livraison colis erreur promo réduction magasin
pedido factura seguimiento envío incidencia descuento cupón tienda
encomenda fatura rastreio rastreamento desconto cupom loja erro versão
ordine fattura spedizione sconto errore negozio
bestelling factuur zending korting fout winkel
zamówienia zamówienie faktury faktura przesyłki przesyłka rabatu błędu sklepu
заказа заказ посылки посылка трек скидки ошибки магазина
замовлення посилки знижки помилки
sipariş siparişi fatura kargo takip indirim hata mağaza
pesanan faktur resi diskon kupon toko
đơn hàng hóa đơn vận đơn mã giảm giá
الطلب الفاتورة الشحنة الخصم الخطأ
ऑर्डर इनवॉइस ट्रैकिंग डिस्काउंट
paquete paket pacco pakket paczka paczki chamado reclamo reclamación solicitud zgłoszenie zgłoszenia
заявка заявки заявку beställning beställningen
""".split()})  # compared case-folded (a final "ς" folds to "σ")
BUSINESS_PREFIXES = ("bestell", "rechnungs", "sendungs", "artikel", "auftrags", "fehler", "track",
                      "tracking", "order", "invoice", "bestel", "factuur", "trace", "gutschein", "rabatt",
                      "promo", "coupon", "voucher", "discount", "sipariş", "indirim", "kargo", "rastre", "rendelés")
BUSINESS_ACRONYMS = frozenset("""
SKU ASIN ISBN ISSN GTIN UPC ORD INV PO RMA HTTP HTTPS API URL USD EUR GBP JPY CNY INR BRL RUB KRW
CHF CAD AUD PDF CSV XML JSON SQL CPU GPU RAM ROM SSD HDD USB OS IOS UTC GMT EST PST CET AM PM OK
FAQ CEO CTO VAT GST KB MB GB TB SLA USPS UPS DHL TNT EMS ISO IEC SHA RFC DIN ANSI IEEE NIST ASTM ECMA UTF
ТТН НДС ПДВ ООО ТОВ ПАО ОАО ЗАО СДЭК ФПД ФП ГОСТ ДСТУ ΦΠΑ
""".split())  # waybills, VAT, company forms, standards: the business's and the state's, no person's
SCRIPT_BUSINESS = ("店舗", "คำสั่งซื้อ", "พัสดุ", "השגיאה", "הזמנה",
                    "订单", "快递单", "运单", "物流", "发票", "型号", "版本", "优惠", "折扣", "工单",
                    "注文", "請求", "伝票", "クーポン", "型番", "주문", "송장", "오류", "버전", "쿠폰", "할인", "문의")
_WORD_RE = re.compile(r"[^\W\d_]+")  # a word as the detectors' token scan reads it
# scripts written without spaces between words, or (Hangul) with particles joined to them
_UNSPACED_RE = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _by_how_found(words: list[str]) -> tuple[set[str], set[str], set[str]]:
    """(whole words, abbreviations written with a dot, stretches of a script read without word
    breaks) of a lexicon's words, case-folded: a word that the token scan reads as one word is
    compared whole; the rest (Indic and Thai words with their vowel signs, CJK, phrases) are found
    as stretches of the text."""
    whole, dotted, inside = set(), set(), set()
    for word in (w.casefold() for w in words):
        if _UNSPACED_RE.search(word):
            inside.add(word)
        elif _WORD_RE.fullmatch(word):
            whole.add(word)
        elif word.endswith(".") and _WORD_RE.fullmatch(word[:-1]):
            dotted.add(word[:-1])
        elif not word.isascii():
            inside.add(word)
    return whole, dotted, inside


_NUMBER_WHOLE, _NUMBER_DOTTED, _NUMBER_INSIDE = _by_how_found([w for ws in NUMBER_WORDS.values() for w in ws])
LABEL_WORDS |= _NUMBER_WHOLE
ABBREVIATED |= _NUMBER_DOTTED
# an abbreviation that is a word of its own elsewhere ("no", "n", "az") is a label only with its dot
LABEL_BEFORE = LABEL_BEFORE | {word: LABEL_BEFORE.get(word, "").replace(".", "") + "."
                               for word in _NUMBER_DOTTED - LABEL_WORDS}
SCRIPT_LABELS = tuple(sorted(set(SCRIPT_LABELS) | _NUMBER_INSIDE, key=lambda w: (-len(w), w)))
# a Latin label acronym written inside a script without spaces ("設備IDは…", "B站UID是…")
_GLUED_ACRONYM = r"(?<=[\u0e00-\u0eff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])(?:UID|ID|PIN|No\.)"
SCRIPT_LABEL_RE = re.compile("|".join(re.escape(w) for w in SCRIPT_LABELS) + "|" + _GLUED_ACRONYM)
_BUSINESS_WHOLE, _, _BUSINESS_INSIDE = _by_how_found([w for ws in BUSINESS_NOUNS.values() for w in ws])
BUSINESS |= _BUSINESS_WHOLE
SCRIPT_BUSINESS = tuple(sorted({w.casefold() for w in SCRIPT_BUSINESS} | _BUSINESS_INSIDE, key=lambda w: (-len(w), w)))
_SCRIPT_BUSINESS_RE = re.compile("|".join(re.escape(w) for w in SCRIPT_BUSINESS))
# an inflected form keeps all but the last letter of a noun of six letters or more
_BUSINESS_STEMS = frozenset(w[:-1] for w in BUSINESS if len(w) >= 6)


def business_in(stretch: str) -> bool:
    """A business noun of a script read without word breaks (or a phrase) in ``stretch``."""
    return _SCRIPT_BUSINESS_RE.search(stretch.casefold()) is not None


FILLER_WORDS = frozenset({w.casefold() for w in """
is are was it's it which es est ist é è är er on to jest lautet die de del da di van for of my our the mi
mio meu minha mon ma mein meine mijn mój moja della dello delle dei do dos das du des le la les el los
las il lo gli der den dem het een a an mia mio mie mis tu tua your sua su seu sua à al au
""".split()})  # compared case-folded (a final "ς" folds to "σ")
COPULAS = frozenset({w.casefold() for w in """
is are was ist sind lautet est es era é è är er jest to je là adalah ialah είναι это є هو هي הוא היא คือ
wynosi zijn
""".split()})  # compared case-folded (a final "ς" folds to "σ")
# prepositions between a noun and its number word ("numéro de commande", "Paczka o numerze …")
LINKS = frozenset("de do da del della di du des of for van der dla для на o z ya la με with con com cu mit avec met"
                  .split())
# possessives written after the noun they own ("Comanda mea nr.", "Oda yangu namba", "παραγγελία μου")
POSTPOSED_POSSESSIVES = frozenset("mea meu minha mio mia yangu wangu μου saya aku ku".split())


def word_of(token: str) -> str:
    """A token as the word lists hold it: case-folded, without the punctuation around it or an
    elided article ("l'ordine", "dell'articolo")."""
    return token.strip(".,:;!?()\"'«»“”-").casefold().replace("\u0307", "").replace("’", "'").split("'")[-1]


MARK_RE = re.compile(r"(?:[#№:]|n[°º.]|no\.|nr\.)$", re.I)


def named_by_business(text: str, start: int, end: int | None = None, *, strict: bool = False) -> bool:
    """Whether a business noun names the value (or the label) at ``start``: one of the two words
    before it in its clause, past number marks, label words and prepositions ("ticket n°
    SAV-40921", "ürün kodu TR-5520", "sản phẩm mã SP-0921", "Paczka InPost o numerze …"), or
    the end of a run of a script written without spaces right before it, read with the label
    that ends at ``end`` ("注文番号", "주문번호", "订单号" where "单号" is the label)."""
    head = clause_before(text, start)
    skipped = _SKIPPED_STRICT if strict else _SKIPPED
    tokens = [t for t in head.split() if (w := word_of(t)) and not MARK_RE.search(w) and w not in LABEL_WORDS
              and w not in skipped]
    for token in reversed(tokens[-2:]):
        if is_business_word(token) or token.strip(".,:;()") in BUSINESS_ACRONYMS:
            return True  # "albarán es el ALB/…", "номер ТТН 2045…"
        if not token[:1].isupper():
            break  # the noun itself; past it only when it is a name ("Paczka InPost o numerze")
    if tokens and _UNSPACED_RE.search(tokens[-1]) and not head[-1:].isspace():
        run = tokens[-1] + (text[start:end] if end is not None else "")  # "订" + "单号"
        return business_in(run[-12:])  # "注文番号", "คำสั่งซื้อเลขที่"
    return business_in(" ".join(tokens[-2:]))  # "sản phẩm mã …", "शिकायत संख्या"


# between a noun and its value: prepositions, possessives after the noun, articles and copulas
# ("el albarán es el ALB/0918/26"); `strict`, for a value whose shape already says what it is (a
# phone, a national id), not the articles and copulas: "the MTCN on my receipt is 482 619 3307"
_SKIPPED = LINKS | POSTPOSED_POSSESSIVES | FILLER_WORDS | COPULAS
_SKIPPED_STRICT = LINKS | POSTPOSED_POSSESSIVES
_BREAK_RE = re.compile(r"[.!?;,。！？\n](?=\s)|[(（]")


def clause_before(text: str, start: int, reach: int = 48) -> str:
    """The text before ``start`` in its clause (at most ``reach`` characters): from the last
    break that is not the dot of an abbreviation ("Bestellung Nr. 304-…")."""
    head = text[max(0, start - reach):start]
    for m in reversed(list(_BREAK_RE.finditer(head))):
        word = head[:m.start()].split()[-1:]
        if m.group() == "." and word and word[0].casefold() in ABBREVIATED | LABEL_BEFORE.keys():
            continue
        return head[m.end():]
    return head


def is_business_word(token: str) -> bool:
    """A business noun, whole ("order", "talebim"), one of the compounds with its prefix
    ("Bestellnummer"), or an inflected form of a noun of six letters or more that keeps all
    but its last letter, with at most four letters after them ("обращению" of "обращение",
    "tichetul" of "tichet"; not "participant" of "partij")."""
    word = word_of(token)
    if word in BUSINESS or word.startswith(BUSINESS_PREFIXES):
        return True
    return len(word) >= 6 and any(word[:n] in _BUSINESS_STEMS for n in range(max(5, len(word) - 4), len(word)))


