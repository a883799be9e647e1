"""Unseen PII battery #4 for the multilingual support-log PII scrubber.

Written 2026-12-05 without seeing the detectors, their patterns, or any other
battery. It holds two lists:

* UNSEEN4   -- 60 realistic customer-support sentences, each carrying exactly one
               personal identifier (memberships, accounts with other providers,
               permits, case/claim files, health/school/legal/government
               references, device or service ids tied to the person, codes that
               unlock something of theirs, ...). `values` lists the raw value as
               written; none of it may survive scrubbing. `cue` is True for every
               case: a word or phrase in the sentence says what the value is.
               Kinds deliberately avoid e-mail, phone, payment card, IBAN, bank
               account, IP/MAC, secrets/tokens, street address, person name,
               passport, date of birth, crypto wallet, coordinates, national
               identity/tax/social-security numbers, driver's licence, licence
               plate, VIN and IMEI.
* BUSINESS4 -- 60 support sentences full of non-personal business identifiers and
               numbers (orders, invoices, tracking, tickets, SKUs, models, error
               codes, versions, prices, dates, stores, batches, flights, ...).
               They must come out of the scrubber unchanged.

All values are invented. Language of each entry is noted in a trailing comment.
"""

from calibration.pii_batteries import Case


UNSEEN4: list[Case] = [
    # ---------------------------------------------------------------- English
    Case(
        "frequent_flyer",
        "Please attach my SkyMiles number 9137 4402 81 to this reservation, the miles never post.",
        ("9137 4402 81",),
        True,
    ),  # en
    Case(
        "library_card",
        "My library card is 21187004563920 and it says blocked when I try to borrow e-books.",
        ("21187004563920",),
        True,
    ),  # en
    Case(
        "health_insurance_member_id",
        "Member ID: XGH-448-20917 (Blue Shield) - the pharmacy says it's not on file.",
        ("XGH-448-20917",),
        True,
    ),  # en
    Case(
        "medical_record_number",
        "The clinic gave me MRN 00-781-4423, could you use that to pull up my lab results?",
        ("00-781-4423",),
        True,
    ),  # en
    Case(
        "student_id",
        "hi, student here, ID S2291847, and the edu discount isn't applying at checkout",
        ("S2291847",),
        True,
    ),  # en
    Case(
        "employee_id",
        "My employee number at Harrow Logistics is HL-07731; HR said to give it to you for the benefits portal.",
        ("HL-07731",),
        True,
    ),  # en
    Case(
        "insurance_claim",
        "I'm following up on claim CLM-2025-0093381 for my water-damaged laptop, nobody has called back.",
        ("CLM-2025-0093381",),
        True,
    ),  # en
    Case(
        "court_case",
        "My solicitor says the hearing under case no. 2K4-CV-01873 was moved, can you confirm the new date?",
        ("2K4-CV-01873",),
        True,
    ),  # en
    Case(
        "visa_application",
        "GWF071559342 is my visa application reference and I still haven't received a decision.",
        ("GWF071559342",),
        True,
    ),  # en
    Case(
        "known_traveler_number",
        "I added my Known Traveler Number to the profile (15K7Q82RT) but it isn't printing on the boarding pass.",
        ("15K7Q82RT",),
        True,
    ),  # en
    Case(
        "pet_microchip",
        "Our dog's microchip is 985 141 000 372 219, can you update the registered keeper details?",
        ("985 141 000 372 219",),
        True,
    ),  # en
    Case(
        "radio_callsign",
        "Ship it to the club station but put my callsign, KD9XQR, on the label please.",
        ("KD9XQR",),
        True,
    ),  # en
    Case(
        "gamer_tag",
        "lost access to my xbox account, gamertag is NightOwl_Tamsin83 if that helps",
        ("NightOwl_Tamsin83",),
        True,
    ),  # en
    Case(
        "transit_card",
        "My Oyster card number 0523 4471 8890 was charged twice for the same journey yesterday.",
        ("0523 4471 8890",),
        True,
    ),  # en
    Case(
        "energy_supply_point",
        "The MPAN on my bill is 14 1234 5678 902 - why does your system say the supply can't be found?",
        ("14 1234 5678 902",),
        True,
    ),  # en
    Case(
        "prescription_number",
        "Refill request for Rx# 6620417-03, it's been showing 'on hold' since Monday.",
        ("6620417-03",),
        True,
    ),  # en
    Case(
        "parcel_locker_code",
        "The locker won't open with my pickup code 847 302, it just beeps twice.",
        ("847 302",),
        True,
    ),  # en
    Case(
        "key_safe_code",
        "For tomorrow's technician visit, the key safe by the back door opens with 4-1-9-7.",
        ("4-1-9-7",),
        True,
    ),  # en
    Case(
        "deposit_scheme_reference",
        "Deposit protection ref DPS/7714/22983 is the one for my flat, please release it to me.",
        ("DPS/7714/22983",),
        True,
    ),  # en
    Case(
        "police_crime_reference",
        "I've reported the stolen phone to the police, crime reference number 01/447812/25, for the insurance.",
        ("01/447812/25",),
        True,
    ),  # en
    Case(
        "pension_member_number",
        "My pension scheme membership number is NP-8823-0046-K and the annual statement never arrived.",
        ("NP-8823-0046-K",),
        True,
    ),  # en
    Case(
        "orcid",
        "Please link the accepted manuscript to my ORCID iD, 0000-0002-7715-4093.",
        ("0000-0002-7715-4093",),
        True,
    ),  # en
    Case(
        "nursing_registration",
        "The revalidation page won't accept my NMC PIN 07H1234E, is the form broken?",
        ("07H1234E",),
        True,
    ),  # en
    Case(
        "exam_candidate_number",
        "Candidate no. 4471-0092 for the Saturday test session - I need to switch to the afternoon venue.",
        ("4471-0092",),
        True,
    ),  # en
    Case(
        "device_serial",
        "AppleCare shows my MacBook under someone else; its serial is C02ZK4YPMD6T.",
        ("C02ZK4YPMD6T",),
        True,
    ),  # en
    # ---------------------------------------------------------------- German
    Case(
        "automobile_club_membership",
        "Meine ADAC-Mitgliedsnummer lautet 216 498 773, bitte hinterlegen Sie die für den Rabatt.",
        ("216 498 773",),
        True,
    ),  # de
    Case(
        "benefits_case_reference",
        "Das Aktenzeichen meines Widerspruchs beim Jobcenter ist 34501BG0012877 – "
        "bitte schicken Sie die Bescheinigung dorthin.",
        ("34501BG0012877",),
        True,
    ),  # de
    Case(
        "utility_meter_serial",
        "Anbei meine Zählernummer: 1APA0153829471. Der Abschlag ist viel zu hoch berechnet.",
        ("1APA0153829471",),
        True,
    ),  # de
    # ---------------------------------------------------------------- French
    Case(
        "family_benefits_number",
        "Mon numéro d'allocataire CAF est le 7734219, faut-il le joindre au dossier ?",
        ("7734219",),
        True,
    ),  # fr
    Case(
        "messaging_handle",
        "Vous pouvez me répondre sur Telegram, mon pseudo c'est @lucie_brt92.",
        ("@lucie_brt92",),
        True,
    ),  # fr
    Case(
        "disability_case_file",
        "Ma demande à la MDPH porte le numéro de dossier 075-2024-118736, pouvez-vous l'indiquer sur l'attestation ?",
        ("075-2024-118736",),
        True,
    ),  # fr
    # ---------------------------------------------------------------- Spanish
    Case(
        "energy_supply_point",
        "El CUPS de mi vivienda es ES0031408123456789JN0F y en la factura aparece otro distinto.",
        ("ES0031408123456789JN0F",),
        True,
    ),  # es
    Case(
        "frequent_flyer",
        "Soy socia de Iberia Plus con el número 80 1457 2296, ¿me pueden sumar los Avios del vuelo?",
        ("80 1457 2296",),
        True,
    ),  # es
    Case(
        "immigration_file",
        "Necesito el certificado; mi expediente de extranjería tiene el número 28/002024/0087341.",
        ("28/002024/0087341",),
        True,
    ),  # es
    # ---------------------------------------------------------------- Portuguese
    Case(
        "sports_club_membership",
        "O número do meu cartão de sócio é 1.204.887 e o bilhete de época não aparece na app.",
        ("1.204.887",),
        True,
    ),  # pt
    Case(
        "health_insurance_member_id",
        "Meu número da carteirinha do plano de saúde é 0064.0123.456789.00-1, mas o sistema recusa.",
        ("0064.0123.456789.00-1",),
        True,
    ),  # pt
    # ---------------------------------------------------------------- Italian
    Case(
        "energy_supply_point",
        "Il codice POD della mia fornitura è IT001E12345678, ma in bolletta ne risulta un altro.",
        ("IT001E12345678",),
        True,
    ),  # it
    Case(
        "student_id",
        "Sono iscritta alla Statale, matricola 948213, e vorrei attivare lo sconto studenti.",
        ("948213",),
        True,
    ),  # it
    # ---------------------------------------------------------------- Dutch
    Case(
        "blood_donor_number",
        "Mijn donornummer bij Sanquin is 1087 6623, kan ik de afspraak van donderdag verzetten?",
        ("1087 6623",),
        True,
    ),  # nl
    Case(
        "previous_provider_customer_number",
        "Kunt u mijn klantnummer bij de vorige provider overnemen voor de overstap? Bij Ziggo was het 60129987.",
        ("60129987",),
        True,
    ),  # nl
    # ---------------------------------------------------------------- Polish
    Case(
        "family_card",
        "Mam Kartę Dużej Rodziny o numerze 0612/2023/004417, czy przysługuje mi zniżka?",
        ("0612/2023/004417",),
        True,
    ),  # pl
    Case(
        "home_insurance_policy",
        "Proszę zaktualizować moją polisę mieszkaniową, numer polisy 9021 3456 7812, bo zmieniłem mieszkanie.",
        ("9021 3456 7812",),
        True,
    ),  # pl
    # ---------------------------------------------------------------- Russian
    Case(
        "utility_personal_account",
        "Номер моего лицевого счёта за электроэнергию 3104478812, оплата до сих пор не отразилась.",
        ("3104478812",),
        True,
    ),  # ru
    Case(
        "work_permit",
        "Патент на работу у меня серии 77 № 2409183, его нужно прикрепить к анкете?",
        ("77 № 2409183",),
        True,
    ),  # ru
    # ---------------------------------------------------------------- Ukrainian
    Case(
        "prescription_number",
        "Мій електронний рецепт має номер AK7P-2M9E-X41H-T6C3, але аптека каже, що він недійсний.",
        ("AK7P-2M9E-X41H-T6C3",),
        True,
    ),  # uk
    # ---------------------------------------------------------------- Turkish
    Case(
        "gas_subscriber_number",
        "Doğalgaz abone numaram 4412087 ama faturada farklı bir numara görünüyor.",
        ("4412087",),
        True,
    ),  # tr
    Case(
        "student_id", "Öğrenci numaram 2021304567, öğrenci indirim kodunu bir türlü alamadım.", ("2021304567",), True
    ),  # tr
    # ---------------------------------------------------------------- Chinese
    Case("loyalty_membership", "我的会员卡号是 8800 1357 2468，积分一直没到账。", ("8800 1357 2468",), True),  # zh
    Case("patient_card", "JZ0029381745 是我的就诊卡号，能帮我查一下体检报告吗？", ("JZ0029381745",), True),  # zh
    # ---------------------------------------------------------------- Japanese
    Case(
        "loyalty_membership",
        "会員番号は A-0387-5521 です。先月のポイントが反映されていません。",
        ("A-0387-5521",),
        True,
    ),  # ja
    Case(
        "hotel_booking",
        "私の宿泊予約（予約番号 HX7K2Q）をキャンセルしたいのですが、手数料はかかりますか。",
        ("HX7K2Q",),
        True,
    ),  # ja
    # ---------------------------------------------------------------- Korean
    Case(
        "exam_candidate_number", "수험번호 20413-0877 로 접수했는데 시험 장소를 바꿀 수 있나요?", ("20413-0877",), True
    ),  # ko
    # ---------------------------------------------------------------- Hungarian
    Case(
        "customer_account_number",
        "Az ügyfélszámom 300 128 4471, kérem, ezzel keressék meg a szerződésemet.",
        ("300 128 4471",),
        True,
    ),  # hu
    # ---------------------------------------------------------------- Arabic
    Case(
        "loyalty_membership", "رقم عضويتي في برنامج الولاء هو 55120934، ولم تُضف النقاط حتى الآن.", ("55120934",), True
    ),  # ar
    Case(
        "medical_record_number", "رقم ملفي الطبي في المستشفى MR-448120، أرجو إرسال التقرير إليّ.", ("MR-448120",), True
    ),  # ar
    # ---------------------------------------------------------------- Hindi
    Case(
        "ration_card", "मेरा राशन कार्ड नंबर UP-3402-118-7742 है, क्या इससे सब्सिडी मिलेगी?", ("UP-3402-118-7742",), True
    ),  # hi
    # ---------------------------------------------------------------- Indonesian
    Case(
        "prepaid_electricity_customer_id",
        "ID pelanggan PLN saya 532110087634, tapi token listriknya belum masuk.",
        ("532110087634",),
        True,
    ),  # id
    # ---------------------------------------------------------------- Vietnamese
    Case(
        "student_id", "Mã số sinh viên của em là 20195123, em muốn đăng ký gói ưu đãi sinh viên.", ("20195123",), True
    ),  # vi
    # ---------------------------------------------------------------- Finnish
    Case(
        "parking_permit",
        "Asukaspysäköintitunnukseni numero on HKI-P 20457, voiko sen siirtää uuteen autoon?",
        ("HKI-P 20457",),
        True,
    ),  # fi
    # ---------------------------------------------------------------- Greek
    Case(
        "loyalty_membership",
        "Ο αριθμός της κάρτας μέλους μου είναι 7300 4481 29 και δεν βλέπω τους πόντους μου.",
        ("7300 4481 29",),
        True,
    ),  # el
]


BUSINESS4: list[str] = [
    # ---------------------------------------------------------------- English
    "Order #A-10482-77 shipped from warehouse DC-3 on 2026-11-28 and should arrive by Friday.",  # en
    "Invoice INV-2026-004512 totals €1,249.90 including 21% VAT.",  # en
    "Tracking number 1Z999AA10123456784 shows the parcel at the Louisville hub.",  # en
    "Ticket #884213 has been escalated to tier 2; expected response within 24 hours.",  # en
    "SKU WM-4410-BLK is back in stock, 35 units at store 0217.",  # en
    "Error code E-1032 appears when firmware 4.2.1 tries to sync.",  # en
    "Use promo code WINTER25 for 25% off orders over $50 until December 31.",  # en
    "Replacement part number 00HN742 fits models T480 and T490.",  # en
    "Flight LH 2041 departs at 07:45 from gate B12; check-in closes 40 minutes before.",  # en
    "Batch LOT 23-0917 of the 500 ml bottles was recalled on 14 March 2026.",  # en
    "The API allows 1,000 requests per minute per key, with bursts up to 1,200.",  # en
    "Our support hours are 08:00-20:00 CET, Monday to Saturday.",  # en
    "Room 412 has been reassigned for the conference on 12/09, capacity 40 seats.",  # en
    "Version 3.18.2 fixes the crash tracked internally as case 2026-11-4471.",  # en
    "Pallet location A-14-03 in aisle 7 holds 120 cartons of item 55-2190.",  # en
    "The model XR-900 comes with a 24-month warranty and a 65 W charger.",  # en
    "Store #1187 in the downtown mall closes at 9 p.m. on weekdays.",  # en
    "Release notes for build 2026.12.1 list 14 bug fixes and 3 new features.",  # en
    "Shipping to zone 4 costs $12.50 for parcels up to 5 kg.",  # en
    "Please quote RMA number RMA-330912 on the return label.",  # en
    "HTTP 429 means you exceeded the limit of 60 calls per 10 seconds.",  # en
    "Firmware update 1.0.47 will roll out to all units between 3 and 5 December.",  # en
    "Container MSCU 4829173 is scheduled to arrive at Rotterdam on 2026-12-15.",  # en
    "Purchase order PO-77120 covers 250 units of part 8812-C at $3.40 each.",  # en
    "Gift wrapping is available for $4.99 per item on orders placed before 22 December.",  # en
    # ---------------------------------------------------------------- German
    "Die Bestellung 4500123987 wurde am 02.12.2026 aus dem Lager Erfurt versendet.",  # de
    "Artikelnummer 7712-0045 ist derzeit nicht lieferbar, voraussichtlich ab KW 51 wieder.",  # de
    "Fehlercode F28 bedeutet, dass der Brenner nicht zündet; "
    "bitte Seite 14 der Anleitung (Version 2.3) beachten.",  # de
    # ---------------------------------------------------------------- French
    "La commande n° FR-2026-118843 a été expédiée le 3 décembre depuis l'entrepôt de Lyon.",  # fr
    "Le code promo NOEL15 donne 15 % de réduction jusqu'au 24/12.",  # fr
    "Le modèle HX-220 est garanti 2 ans ; la pièce détachée réf. 44-118 coûte 19,90 €.",  # fr
    # ---------------------------------------------------------------- Spanish
    "El pedido 908-4471 salió del almacén de Zaragoza y llegará en 48 horas.",  # es
    "La factura F2026/0345 incluye 3 unidades del artículo SKU 66-210-AZ.",  # es
    "El vuelo IB3166 sale a las 18:25 desde la terminal 4S.",  # es
    # ---------------------------------------------------------------- Portuguese
    "A encomenda PT-55102 foi enviada hoje e o prazo de entrega é de 3 a 5 dias úteis.",  # pt
    "O código de erro 0x80070005 aparece na versão 10.4 do aplicativo.",  # pt
    # ---------------------------------------------------------------- Italian
    "L'ordine n. 2026/88412 è in consegna; il corriere passerà tra le 9:00 e le 13:00.",  # it
    "Il lotto 24B-117 del prodotto scade il 30/06/2027.",  # it
    # ---------------------------------------------------------------- Dutch
    "Bestelling 100-448-2291 wordt morgen tussen 14:00 en 18:00 bezorgd.",  # nl
    "Artikel 4410.220 kost € 29,95 en is op voorraad in filiaal 36.",  # nl
    # ---------------------------------------------------------------- Polish
    "Zamówienie nr 2026/12/0457 zostało wysłane z magazynu w Poznaniu.",  # pl
    "Kod błędu E04 oznacza zablokowany filtr; model PX-300, wersja oprogramowania 1.9.",  # pl
    # ---------------------------------------------------------------- Russian
    "Заказ № 784512 передан в службу доставки, срок — 2–4 рабочих дня.",  # ru
    "Артикул 30-4471-Б снова в наличии на складе в Казани, 120 штук.",  # ru
    # ---------------------------------------------------------------- Ukrainian
    "Замовлення № 55-1029 буде доставлено 8 грудня з 10:00 до 14:00.",  # uk
    # ---------------------------------------------------------------- Turkish
    "Sipariş numarası 700145882 olan paket bugün kargoya verildi.",  # tr
    "Kampanya kodu KIS20 ile 500 TL üzeri alışverişlerde %20 indirim geçerlidir.",  # tr
    # ---------------------------------------------------------------- Chinese
    "订单号 20261204-88321 已从上海仓发货，预计3天内送达。",  # zh
    "型号 AX-3000 的固件版本 2.1.7 修复了错误代码 E105。",  # zh
    # ---------------------------------------------------------------- Japanese
    "注文番号 JP-448201 の商品は12月6日に出荷予定です。",  # ja
    "型番 KX-550 の交換部品（品番 12-8840）は在庫があります。",  # ja
    # ---------------------------------------------------------------- Korean
    "주문번호 2026120588123 상품은 내일 오후 2시 이후 출고됩니다.",  # ko
    # ---------------------------------------------------------------- Hungarian
    "A 45-2291 számú rendelést a győri raktárból küldtük, a szállítási díj 1 490 Ft.",  # hu
    # ---------------------------------------------------------------- Arabic
    "تم شحن الطلب رقم 99812 من مستودع جدة ويصل خلال 3 أيام عمل.",  # ar
    "رمز الخصم SALE30 صالح حتى 31 ديسمبر على جميع المنتجات.",  # ar
    # ---------------------------------------------------------------- Hindi
    "ऑर्डर नंबर 40981234 कल शाम 6 बजे तक डिलीवर हो जाएगा।",  # hi
    # ---------------------------------------------------------------- Indonesian
    "Pesanan nomor INV/2026/12/00871 sudah dikirim dari gudang Bekasi.",  # id
    # ---------------------------------------------------------------- Vietnamese
    "Đơn hàng số 55120-VN đã được giao cho đơn vị vận chuyển lúc 10:30 sáng nay.",  # vi
    # ---------------------------------------------------------------- Finnish
    "Tilaus 118-2044 lähti varastolta tänään, toimitusaika on 2–3 arkipäivää.",  # fi
    # ---------------------------------------------------------------- Greek
    "Η παραγγελία 77-4412 αποστέλλεται σήμερα από την αποθήκη της Αθήνας.",  # el
]
