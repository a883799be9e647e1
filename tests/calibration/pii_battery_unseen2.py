"""Second unseen PII battery for the support-log scrubber (written 2026-12-05).

UNSEEN2 holds personal-value kinds that were never named to whoever wrote the detectors, and this file was
written without looking at the detector code or the existing tests. Every case is one realistic customer
sentence carrying exactly one personal value, introduced by a cue word that says what the value is
(``cue=True``). ``values`` lists the raw value exactly as it appears in ``text``; none of these substrings may
survive scrubbing. About half the cases are English, the rest are spread over other languages.

BUSINESS holds ordinary support sentences full of non-personal identifiers and numbers (order, tracking,
invoice, ticket and case numbers, SKUs, model numbers, promo codes, error codes, versions, prices, dates,
times, quantities, rooms, gates, flights, stores, bins, lots, plan tiers). They contain no personal data and
must come out of the scrubber unchanged.
"""

from calibration.pii_batteries import Case


UNSEEN2: list[Case] = [
    # --- English ---
    Case(
        "pet_microchip",
        "My dog's microchip number is 985112003456789 - can you engrave it on the ID tag I ordered?",
        ("985112003456789",),
        True,
    ),
    Case(
        "blood_donor_id",
        "I'm a regular donor, my blood donor ID is BD-4471-2290, please add it to the appointment.",
        ("BD-4471-2290",),
        True,
    ),
    Case(
        "organ_donor_registration",
        "The form asks for it, so: my organ donor registration number is 3008817264.",
        ("3008817264",),
        True,
    ),
    Case(
        "boat_hull_id",
        "The hull identification number on my boat is BZR48213K526, and the cover I ordered doesn't fit it.",
        ("BZR48213K526",),
        True,
    ),
    Case(
        "pilot_licence",
        "For the aviation headset warranty claim, my FAA pilot certificate number is 3859104.",
        ("3859104",),
        True,
    ),
    Case(
        "professional_registration",
        "I'm a nurse and my NMC PIN is 09I2847E, so I should qualify for the healthcare worker discount.",
        ("09I2847E",),
        True,
    ),
    Case(
        "professional_registration",
        "I'm an attorney - my State Bar number is 287451 - please apply the legal professional pricing.",
        ("287451",),
        True,
    ),
    Case(
        "transit_card",
        "My Oyster card number 0512 3498 7761 was charged twice for the same journey.",
        ("0512 3498 7761",),
        True,
    ),
    Case(
        "toll_tag",
        "The E-ZPass tag ID 00812345678 on my account keeps getting billed for tolls I never drove through.",
        ("00812345678",),
        True,
    ),
    Case(
        "pension_plan",
        "My pension plan member number is PEN-88120457 - why hasn't last month's contribution posted?",
        ("PEN-88120457",),
        True,
    ),
    Case(
        "benefits_claim",
        "I'm following up on my unemployment benefits claim, reference UC-7734-0091-K, which is still pending.",
        ("UC-7734-0091-K",),
        True,
    ),
    Case(
        "mortgage_account",
        "Please resend the annual statement for my mortgage account MTG-0045529187, the first one never came.",
        ("MTG-0045529187",),
        True,
    ),
    Case(
        "insurance_claim",
        "Following up on my car insurance claim number CLM-2026-448193 - the adjuster still hasn't called.",
        ("CLM-2026-448193",),
        True,
    ),
    Case(
        "genetic_test_kit",
        "I registered my DNA test kit ID GTK-4482-91730 three weeks ago but no results are showing yet.",
        ("GTK-4482-91730",),
        True,
    ),
    Case(
        "vaccination_certificate",
        "My vaccination certificate ID URN:UVCI:01:IE:5F7K2Q9LXM3T#H won't scan at the venue entrance.",
        ("URN:UVCI:01:IE:5F7K2Q9LXM3T#H",),
        True,
    ),
    Case(
        "exam_candidate",
        "My IELTS candidate number is 004719 and the test report form still hasn't arrived.",
        ("004719",),
        True,
    ),
    Case(
        "sim_puk",
        "My phone is locked and asks for the PUK; the PUK code printed on my SIM holder is 48271936.",
        ("48271936",),
        True,
    ),
    Case(
        "union_membership",
        "My union membership number is UNITE-0047712 - does the member discount apply to this order?",
        ("UNITE-0047712",),
        True,
    ),
    Case(
        "casino_loyalty",
        "My casino players club card number 7700 1284 5531 didn't get the points from Saturday night.",
        ("7700 1284 5531",),
        True,
    ),
    Case(
        "parking_permit",
        "Residential parking permit number RP-2026-083341 shows as expired even though I renewed it.",
        ("RP-2026-083341",),
        True,
    ),
    Case(
        "car_immobiliser_code",
        "The locksmith needs the immobiliser code from my key card, it's 4D63-9A1F, to cut the spare key.",
        ("4D63-9A1F",),
        True,
    ),
    # --- German ---
    Case(
        "pet_microchip",
        "Die Transpondernummer meines Hundes lautet 276098106543210, bitte auf die bestellte Hundemarke gravieren.",
        ("276098106543210",),
        True,
    ),
    Case(
        "fishing_permit",
        "Meine Fischereischein-Nummer ist FS-0931-4472, bekomme ich damit den Anglerrabatt?",
        ("FS-0931-4472",),
        True,
    ),
    # --- French ---
    Case(
        "benefits_claim",
        "Mon numéro d'allocataire CAF est 4481927 ; où dois-je l'indiquer pour le remboursement ?",
        ("4481927",),
        True,
    ),
    Case(
        "professional_registration",
        "Je suis médecin, mon numéro RPPS est 10003456789 : pouvez-vous appliquer le tarif professionnel ?",
        ("10003456789",),
        True,
    ),
    # --- Spanish ---
    Case(
        "professional_registration",
        "Soy médico y mi número de colegiado es 280841573; ¿se aplica el descuento para sanitarios?",
        ("280841573",),
        True,
    ),
    Case(
        "club_membership",
        "Mi número de socio del club es 004471-B, pero la web no me aplica el descuento para socios.",
        ("004471-B",),
        True,
    ),
    # --- Portuguese ---
    Case(
        "sim_puk",
        "O meu telemóvel pede o código PUK; o PUK que vem no cartão do SIM é 83920174.",
        ("83920174",),
        True,
    ),
    Case(
        "mortgage_account",
        "O número do meu contrato de crédito à habitação é CH-0045129938; podem reenviar a declaração anual?",
        ("CH-0045129938",),
        True,
    ),
    # --- Italian ---
    Case(
        "club_membership",
        "Il numero della mia Tessera del Tifoso è 0081234567, ma l'acquisto del biglietto viene rifiutato.",
        ("0081234567",),
        True,
    ),
    Case(
        "insurance_claim",
        "Il numero del mio sinistro è SX-2026-0071934: quando verrà liquidato il rimborso?",
        ("SX-2026-0071934",),
        True,
    ),
    # --- Dutch ---
    Case(
        "transit_card",
        "Mijn OV-chipkaartnummer is 3528 0100 4471 2290 en er is twee keer instaptarief afgeschreven.",
        ("3528 0100 4471 2290",),
        True,
    ),
    # --- Polish ---
    Case(
        "union_membership",
        "Numer mojej legitymacji związkowej to ZZ-447120 – czy przysługuje mi zniżka członkowska?",
        ("ZZ-447120",),
        True,
    ),
    # --- Russian ---
    Case(
        "transit_card",
        "Номер моей карты «Тройка» — 3512448903, с неё дважды списали оплату за проезд.",
        ("3512448903",),
        True,
    ),
    # --- Ukrainian ---
    Case(
        "blood_donor_id",
        "Мій номер донора крові — ДК-0093-4412, прошу додати його до запису на донацію.",
        ("ДК-0093-4412",),
        True,
    ),
    # --- Chinese ---
    Case(
        "professional_registration",
        "我的律师执业证号是 11101201810234567，请帮我申请法律行业优惠。",
        ("11101201810234567",),
        True,
    ),
    Case(
        "parking_permit",
        "我的小区停车证编号是 TC-2026-08841，为什么系统还显示已过期？",
        ("TC-2026-08841",),
        True,
    ),
    # --- Japanese ---
    Case(
        "exam_candidate",
        "TOEICの受験番号は 2684103725 ですが、公式スコア証明書がまだ届いていません。",
        ("2684103725",),
        True,
    ),
    # --- Korean ---
    Case(
        "blood_donor_id",
        "제 헌혈증 번호는 02-26-018437입니다. 헌혈 기념품 배송은 언제 되나요?",
        ("02-26-018437",),
        True,
    ),
    # --- Arabic ---
    Case(
        "club_membership",
        "رقم عضويتي في النادي الرياضي هو NC-448120، لماذا لم يتم تطبيق خصم الأعضاء؟",
        ("NC-448120",),
        True,
    ),
    # --- Hindi ---
    Case(
        "pension_plan",
        "मेरा पीएफ यूएएन नंबर 100987654321 है, कृपया निकासी के दावे की स्थिति बताइए।",
        ("100987654321",),
        True,
    ),
    # --- Turkish ---
    Case(
        "professional_registration",
        "Baro sicil numaram 41287; avukat indirimini uygulayabilir misiniz?",
        ("41287",),
        True,
    ),
    # --- Indonesian ---
    Case(
        "insurance_claim",
        "Nomor klaim asuransi saya KLM-2026-0098812, kapan dana penggantiannya dikirim?",
        ("KLM-2026-0098812",),
        True,
    ),
    # --- Vietnamese ---
    Case(
        "exam_candidate",
        "Số báo danh thi của tôi là 01004721 nhưng tôi vẫn chưa nhận được giấy báo kết quả.",
        ("01004721",),
        True,
    ),
]


BUSINESS: list[str] = [
    # --- English ---
    "Where is my order #48213? The tracking page still says label created.",
    "Your package with UPS tracking number 1Z999AA10123456784 is out for delivery and should arrive by 8:00 PM.",
    "Invoice INV-2026-00417 shows $149.99, but I was quoted $129.99 for the annual plan.",
    "I opened support ticket #88231 yesterday and nobody has replied yet.",
    "The SKU is WH-1000XM5-B, quantity 2, and I'd like the black version.",
    "Windows Update keeps failing with error 0x80070005 on build 22631.2861.",
    "The API returns HTTP 503 every few minutes since version 4.12.3 was released.",
    "The promo code SPRING25 should take 25% off orders over $50, but checkout says it's invalid.",
    "Store #1142 is open Monday to Friday 9:00-18:00 and Saturday 10:00-14:00.",
    "The replacement part is model number HD-2240R, batch L2026-0918, expiring 03/2028.",
    "Case 00451872 was escalated to tier 2 on 2026-11-28 at 14:35 UTC.",
    "Flight BA 287 was delayed by 3 hours, so the freight pickup moved to gate B42.",
    "We upgraded from the Basic plan ($9.99/month) to Pro ($19.99/month) on November 3.",
    "USPS tracking 9400 1118 9922 3344 5566 77 hasn't updated in five days.",
    "The warehouse bin code is A-14-03-B and the pallet was 48 units short.",
    "FedEx tracking number 7749 1234 5678 shows delivery exception code 08.",
    "Please refund the 3 items from order 112-4478123-9982331, totaling $86.47.",
    "Firmware 2.3.1 (build 4471) bricked the router; rolling back to 2.2.9 fixed it.",
    "Conference room 4B on the 12th floor is booked for the vendor demo at 3:30 PM.",
    "Lot number 24K118 of the vitamin D capsules was recalled on 2026-10-14.",
    "Royal Mail tracking RR123456785GB says it's held at the delivery office until 12 December.",
    "Quote Q-20261201-07 is valid for 30 days and covers 500 units at €2.40 each.",
    "I was charged twice for order #A7-55120; both charges were $42.00.",
    "Ticket SUP-10293 was merged into SUP-10288 because it's the same outage.",
    "Error code E-4021 appears on the WM-8800 washer display after the spin cycle.",
    "Python 3.12.7 works, but 3.13.0 throws ImportError with package version 1.8.0rc2.",
    "The return label for RMA 7740213 expires after 14 days.",
    "Our SLA is 99.9% uptime, and incident INC0012345 lasted 47 minutes.",
    "Line 6 of 12 on purchase order PO-55817 arrived damaged.",
    "Maximum upload size is 250 MB; a 413 error means the file exceeded it.",
    # --- German ---
    "Meine Bestellnummer ist 302-4481192-1, die Lieferung sollte am 14.12.2026 ankommen.",
    "Die DHL-Sendungsnummer 00340434161094042557 zeigt seit drei Tagen keinen neuen Status.",
    # --- French ---
    "Mon numéro de commande 7781234 n'apparaît pas dans l'historique.",
    "Le code promo NOEL20 donne 20 % de réduction jusqu'au 31 décembre.",
    # --- Spanish ---
    "El pedido n.º 2026-55871 incluye 3 unidades del modelo RX-450 a 89,99 € cada una.",
    "La incidencia número 440921 sigue abierta desde el 2 de diciembre.",
    # --- Portuguese ---
    "O pedido número 88120045 foi enviado pelos Correios com o código de rastreio PM123456789BR.",
    "A versão 5.4.2 do aplicativo apresenta o erro 500 ao finalizar a compra.",
    # --- Italian ---
    "L'ordine n. 4471-2290 è stato spedito con BRT, consegna prevista entro venerdì 11 dicembre.",
    "Il codice sconto ESTATE15 non funziona sul carrello da 120,00 €.",
    # --- Dutch ---
    "Mijn bestelnummer 1029384756 is nog steeds niet verzonden, terwijl er 'binnen 24 uur' stond.",
    "De PostNL track-en-tracecode 3SABCD1234567 geeft aan dat het pakket in het sorteercentrum ligt.",
    # --- Polish ---
    "Do zamówienia nr 2026/12/00871 nie dołączono faktury VAT FV/1123/2026.",
    "Paczka InPost o numerze 620012345678901234567890 utknęła w sortowni od 3 grudnia.",
    # --- Russian ---
    "Номер заказа 58-2290117, трек-номер RA123456789RU, посылка не двигается уже неделю.",
    "Ошибка 0xC004F074 появляется при активации после обновления до версии 23H2.",
    # --- Ukrainian ---
    "Замовлення № 204513, ТТН Нової пошти 20450012345678, посилка досі у відділенні № 31.",
    "Код помилки E17 з'являється на пральній машині моделі WM-7012 після оновлення прошивки 1.0.4.",
    # --- Chinese ---
    "订单号 202612040001 显示已发货，但顺丰运单号 SF1234567890123 查不到物流信息。",
    "优惠码 DOUBLE12 满300减50，为什么结算时提示无效？",
    # --- Japanese ---
    "注文番号 250-1234567-8901234 の商品は2個届くはずが、1個しか届いていません。",
    "ヤマト運輸の伝票番号 4321-5678-9012 で追跡すると、配達予定は12月6日の14時〜16時です。",
    # --- Korean ---
    "주문번호 20261204-0012345의 배송 조회가 안 됩니다. CJ대한통운 송장번호는 6789-1234-5678입니다.",
    "앱 버전 3.8.1에서 결제 시 오류 코드 E2004가 발생합니다.",
    # --- Arabic ---
    "رقم الطلب 7712045 ولم تصل الشحنة حتى الآن رغم أن الموعد المتوقع كان 3 ديسمبر.",
    "كود الخصم RAMADAN30 لا يعمل على الطلبات التي تزيد عن 200 ريال.",
    # --- Hindi ---
    "मेरा ऑर्डर नंबर OD428812345678901234 है और डिलीवरी 5 दिसंबर तक होनी थी।",
    "ऐप का संस्करण 7.2.0 अपडेट करने के बाद त्रुटि कोड 403 आ रहा है।",
    # --- Turkish ---
    "Sipariş numaram 1002458891, kargo takip numarası 7260012345678 ama paket hâlâ teslim edilmedi.",
    "İndirim kodu KIS20 sepette 500 TL üzeri siparişlerde geçerli mi?",
    # --- Indonesian ---
    "Pesanan INV/20261203/MPL/3345567801 belum dikirim padahal sudah 3 hari.",
    "Resi J&T JP8123456789 tidak bisa dilacak sejak tanggal 1 Desember.",
    # --- Vietnamese ---
    "Đơn hàng mã 261204ABCD1234 vẫn ở trạng thái chờ lấy hàng từ ngày 4/12.",
    "Mã giảm giá FREESHIP50 không áp dụng được cho đơn hàng 150.000₫.",
]
