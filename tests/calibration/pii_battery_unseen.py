"""Unseen-kinds PII battery (2026-12-05).

Test data for the PII scrubber applied to customer-support conversation logs
(multilingual business chats). Every case is one sentence a customer might
write to support, carrying one (occasionally two) personal values of a kind
that was never named to whoever wrote the detectors. The battery was written
without seeing the detector code it tests.

Its purpose is to measure how far detection coverage reaches beyond the
enumerated kinds (e-mail, phone, cards, IBAN, national ids, addresses, names,
and so on, all deliberately excluded here): loyalty and frequent-flyer numbers,
library cards, voter ids, residence permits, court case numbers, utility supply
points, access codes, booking references, licence keys, and similar.

Each case lists in ``values`` the raw substrings that must not survive
scrubbing. Every case carries a cue, a word or phrase in the sentence that says
what the value is (``cue=True``). All values are invented; where the real
format has a known check digit (Luhn-style cards, UK MPAN core, Spanish CUPS,
Brazilian titulo de eleitor, Dutch EAN/GSRN connection codes, Ontario health
card), it has been computed correctly.
"""

from calibration.pii_batteries import Case


UNSEEN: list[Case] = [
    # ------------------------------------------------------------------ English
    Case(
        "frequent_flyer_number",
        "Hi, my Miles & More number is 992000417183522 but the miles from last week's flight never showed up.",
        ("992000417183522",),
        True,
    ),
    Case(
        "library_card_number",
        "I can't log in to the e-book app, my library card number is 21234001847367.",
        ("21234001847367",),
        True,
    ),
    Case(
        "voter_id",
        "The form keeps rejecting my voter registration number 7734021956, can you check it?",
        ("7734021956",),
        True,
    ),
    Case(
        "military_service_number",
        "For the forces discount, my service number is 25198473 and I'm still serving.",
        ("25198473",),
        True,
    ),
    Case(
        "firearm_licence",
        "Please attach my firearm certificate number NYP/FAC/204781 to the order for the gun safe.",
        ("NYP/FAC/204781",),
        True,
    ),
    Case(
        "hunting_licence",
        "The checkout asks for my hunting license number, it's 2025-HL-0458812.",
        ("2025-HL-0458812",),
        True,
    ),
    Case(
        "residence_permit_number",
        "Your onboarding wants proof of status: my BRP number is ZU6152847.",
        ("ZU6152847",),
        True,
    ),
    Case(
        "inmate_number",
        "I'm sending a care package to my brother, his inmate register number is 48213-054.",
        ("48213-054",),
        True,
    ),
    Case(
        "court_case_number",
        "My lawyer needs the invoices for my case, case number 1:25-cv-04817, before Friday.",
        ("1:25-cv-04817",),
        True,
    ),
    Case(
        "utility_supply_number",
        "We just moved in and the electricity MPAN for our flat is 1248017392567.",
        ("1248017392567",),
        True,
    ),
    Case(
        "vehicle_registration_document",
        "To transfer the car I was asked for the V5C document reference number, which is 48120937615.",
        ("48120937615",),
        True,
    ),
    Case(
        "health_card_number",
        "The clinic portal says my health card number 5837291045 is invalid.",
        ("5837291045",),
        True,
    ),
    Case(
        "prescription_number",
        "Could you check why my refill is delayed? Prescription number Rx 6628104.",
        ("6628104",),
        True,
    ),
    Case(
        "airline_pnr",
        "I need to change my seat, the booking reference is QX7T4M.",
        ("QX7T4M",),
        True,
    ),
    Case(
        "e_ticket_number",
        "The refund hasn't arrived for e-ticket number 2202481937465.",
        ("2202481937465",),
        True,
    ),
    Case(
        "wifi_credentials",
        "The smart plug won't pair: my home Wi-Fi network name is FernHollow_5G and the WPA key is maple-otter-7731.",
        ("FernHollow_5G", "maple-otter-7731"),
        True,
    ),
    Case(
        "home_alarm_code",
        "The installer set the alarm disarm code to 7391, can you help me change it?",
        ("7391",),
        True,
    ),
    Case(
        "security_question_answer",
        "For verification, the answer to my security question about my first pet's name is Pickles.",
        ("Pickles",),
        True,
    ),
    Case(
        "personal_meeting_id",
        "Join me for the demo on my Zoom personal meeting ID 845 2291 7036 at three.",
        ("845 2291 7036",),
        True,
    ),
    Case(
        "software_licence_key",
        "I reinstalled Windows and now my licence key JX4K9-PQ27M-88TRW-V3N6B-ZL0QH shows as already used.",
        ("JX4K9-PQ27M-88TRW-V3N6B-ZL0QH",),
        True,
    ),
    # ------------------------------------------------------------------ German
    Case(
        "utility_meter_number",
        "Der Zählerstand wurde falsch übernommen, meine Zählernummer ist 1ESY1160472315.",
        ("1ESY1160472315",),
        True,
    ),
    Case(
        "court_case_number",
        "Bitte schicken Sie die Rechnung auch an das Amtsgericht, Aktenzeichen 3 C 412/25.",
        ("3 C 412/25",),
        True,
    ),
    # ------------------------------------------------------------------ French
    Case(
        "frequent_flyer_number",
        "Mes miles ne sont pas crédités, mon numéro Flying Blue est le 2048193756.",
        ("2048193756",),
        True,
    ),
    Case(
        "door_access_code",
        "Pour la livraison, le digicode de l'immeuble est 47B29, au troisième étage.",
        ("47B29",),
        True,
    ),
    # ------------------------------------------------------------------ Spanish
    Case(
        "utility_supply_number",
        "Quiero cambiar la potencia contratada, el código CUPS de mi vivienda es ES0021000047839215PV.",
        ("ES0021000047839215PV",),
        True,
    ),
    Case(
        "gym_membership_number",
        "Me han cobrado dos veces la cuota, mi número de socio del gimnasio es 00582147.",
        ("00582147",),
        True,
    ),
    # ------------------------------------------------------------------ Portuguese
    Case(
        "voter_id",
        "O cadastro pede o título de eleitor, o meu é 438172050116, mas dá erro.",
        ("438172050116",),
        True,
    ),
    Case(
        "frequent_flyer_number",
        "As milhas da viagem a Lisboa não entraram, o meu número de cliente TAP Miles&Go é 318604927.",
        ("318604927",),
        True,
    ),
    # ------------------------------------------------------------------ Italian
    Case(
        "prescription_number",
        "La farmacia non trova la ricetta elettronica, il codice NRE è 1200A4005381926.",
        ("1200A4005381926",),
        True,
    ),
    Case(
        "utility_supply_number",
        "Per la voltura della luce mi serve aiuto, il codice POD dell'appartamento è IT001E48217350.",
        ("IT001E48217350",),
        True,
    ),
    # ------------------------------------------------------------------ Dutch
    Case(
        "utility_supply_number",
        "Bij het overstappen vraagt het formulier mijn EAN-code, die is 871685200004617292.",
        ("871685200004617292",),
        True,
    ),
    Case(
        "library_card_number",
        "Mijn bibliotheekpas werkt niet meer in de app, het pasnummer is 20190047351826.",
        ("20190047351826",),
        True,
    ),
    # ------------------------------------------------------------------ Polish
    Case(
        "court_case_number",
        "Sąd prosi o fakturę do sprawy o sygnaturze akt I C 1187/25, czy możecie ją wystawić ponownie?",
        ("I C 1187/25",),
        True,
    ),
    # ------------------------------------------------------------------ Russian
    Case(
        "utility_account_number",
        "Оплата за свет не прошла, номер лицевого счёта 4102738596.",
        ("4102738596",),
        True,
    ),
    Case(
        "door_access_code",
        "Курьер не может войти, код домофона 127К4589.",
        ("127К4589",),
        True,
    ),
    # ------------------------------------------------------------------ Chinese
    Case(
        "parcel_locker_pin",
        "快递柜的取件码是 62301845，但是柜门打不开。",
        ("62301845",),
        True,
    ),
    # ------------------------------------------------------------------ Japanese
    Case(
        "hotel_booking_reference",
        "ホテルの予約番号は RSV-20261207-4418 です。チェックイン時間を変更できますか。",
        ("RSV-20261207-4418",),
        True,
    ),
    # ------------------------------------------------------------------ Korean
    Case(
        "door_access_code",
        "배송 기사님께 공동현관 출입 비밀번호 #1357* 를 전달해 주세요.",
        ("#1357*",),
        True,
    ),
    # ------------------------------------------------------------------ Arabic
    Case(
        "visa_number",
        "طلب الفندق رقم التأشيرة الخاص بي، وهو 6048217359.",
        ("6048217359",),
        True,
    ),
    # ------------------------------------------------------------------ Hindi
    Case(
        "voter_id",
        "केवाईसी के लिए मेरा वोटर आईडी नंबर RJX4817263 है, कृपया इसे अपडेट करें।",
        ("RJX4817263",),
        True,
    ),
    # ------------------------------------------------------------------ Turkish
    Case(
        "frequent_flyer_number",
        "Uçuş millerim yüklenmedi, Miles&Smiles üyelik numaram TK482017395.",
        ("TK482017395",),
        True,
    ),
    Case(
        "utility_account_number",
        "Yeni eve taşındım, elektrik tesisat numarası 4001283765, aboneliği üzerime almak istiyorum.",
        ("4001283765",),
        True,
    ),
]
