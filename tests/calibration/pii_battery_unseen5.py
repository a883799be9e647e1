"""Unseen PII battery no. 5 for the multilingual support-log PII scrubber.

Written 2026-12-05 without seeing the detectors, their patterns, or any other
battery's sentences. It holds two lists:

* UNSEEN5   -- 60 realistic customer-support sentences (chat or e-mail to a
               company's support), each carrying exactly one personal value of a
               kind that was never named to whoever wrote the detectors:
               memberships (gym, union, clubs, associations, cooperatives),
               insurance policies held by a person (car, home, life, travel, pet,
               voluntary health, long-term care), pension references, warranty
               registrations, pupil/exam/candidate numbers, employee badges and
               payroll numbers, professional registrations (nurse, lawyer,
               engineer, pharmacist), transit/ski/season/museum/zoo/pool passes,
               parking passes, hunting/fishing/firearms/pilot licences, boat and
               bicycle registrations, prescriptions, vaccination certificates,
               organ donor register, veteran and military numbers, deposits,
               title deeds, housing queues, ration and family cards, ...
               `values` lists the raw value exactly as written in `text`; none of
               it may survive scrubbing. `cue` is True for every case: a word or
               phrase in the sentence (before or after the value, possessive,
               compound or inflected, in any script) says what the value is.
* BUSINESS5 -- 60 first-person support sentences in the same mix of languages,
               full of non-personal business identifiers and numbers (orders,
               invoices, tracking, help-desk tickets, SKUs, models, error codes,
               versions, prices, quantities, dates, stores, lots, flights, rooms,
               pages, percentages). They must come out of the scrubber unchanged.

All values are invented. The language of each entry is noted in a trailing comment.
"""

from calibration.pii_batteries import Case


UNSEEN5: list[Case] = [
    # ---------------------------------------------------------------- English
    Case("gym_membership_number",
         "Hi, I froze my PureFit membership in March but you still charged me for April and May - "
         "membership no. PF-0048213-UK.",
         ("PF-0048213-UK",), True),  # English
    Case("car_insurance_policy_number",
         "MTR/88412907/01 is my car insurance policy number, and the renewal quote you sent is almost "
         "double last year's.",
         ("MTR/88412907/01",), True),  # English
    Case("warranty_registration_id",
         "hey so i registered the dishwasher for the 5 yr extended warranty, warranty reg id wr7731-40k9, "
         "can u check its active",
         ("wr7731-40k9",), True),  # English
    Case("school_pupil_number",
         "Our son's unique pupil number is H801200304512 - the school told us lunch top-ups for him go "
         "through your app.",
         ("H801200304512",), True),  # English
    Case("trade_union_membership_number",
         "I've paid my union dues by direct debit since 2019, so please look me up by my membership "
         "number 0457719 and move the payment date to the 15th.",
         ("0457719",), True),  # English
    Case("employee_badge_number",
         "Lost my work ID badge on the train yesterday; the badge number printed on the back was EMP-22817, "
         "please disable it.",
         ("EMP-22817",), True),  # English
    Case("car_sharing_member_id",
         "The app keeps logging me out every time I try to unlock a car. My car-sharing member ID is "
         "ZC-5519-0082-T.",
         ("ZC-5519-0082-T",), True),  # English
    Case("season_ticket_number",
         "My season ticket (ST 2026 004417) didn't scan at the turnstile on Saturday and I had to buy a "
         "match ticket on top.",
         ("ST 2026 004417",), True),  # English
    Case("pension_reference",
         "Please quote my pension reference when you reply - it's PEN/0093321/K - I need the transfer "
         "value before Friday.",
         ("PEN/0093321/K",), True),  # English
    Case("prescription_number",
         "The refill for perscription number 6620419-03 has been 'pending' in your pharmacy app for four "
         "days now.",
         ("6620419-03",), True),  # English
    Case("hunting_licence_number",
         "I renewed online, but my hunting licence HL-0318842-NY still shows as expired at checkout.",
         ("HL-0318842-NY",), True),  # English
    Case("boat_registration_number",
         "The marina bill lists the wrong vessel - my boat is registered as CT 4471 AB, not the one on the "
         "invoice.",
         ("CT 4471 AB",), True),  # English
    Case("tenancy_deposit_reference",
         "The landlord says my deposit is protected with you; my deposit reference should be "
         "DPS-EW-20931847, can you confirm?",
         ("DPS-EW-20931847",), True),  # English
    Case("childcare_booking_id",
         "We'd like to move our daughter's nursery sessions from Tuesdays to Thursdays; the childcare "
         "booking ID is CCB-77810.",
         ("CCB-77810",), True),  # English
    Case("vaccination_certificate_id",
         "The travel portal keeps rejecting my vaccination certificate, whose identifier reads: "
         "URN:UVCI:01:IE:5FT8QD2HW9JC#K",
         ("URN:UVCI:01:IE:5FT8QD2HW9JC#K",), True),  # English
    Case("organ_donor_registration_number",
         "I signed up to the organ donor register through your health app and received registration "
         "number ODR 3390 1175 - where can I see it?",
         ("ODR 3390 1175",), True),  # English
    Case("firearms_certificate_number",
         "Before you can ship the rifle scope you asked for my firearms certificate number, so here it "
         "is: FAC/ESX/21-0977.",
         ("FAC/ESX/21-0977",), True),  # English
    Case("pilot_licence_number",
         "For the flight-school discount on the headset, your form asks for my pilot licence: "
         "UK.FCL.PPL.00183925",
         ("UK.FCL.PPL.00183925",), True),  # English
    Case("nursing_registration_pin",
         "I'm a registered nurse (NMC PIN 09I2784E) and the healthcare-worker discount didn't apply at "
         "checkout.",
         ("09I2784E",), True),  # English
    Case("exam_candidate_number",
         "I can't download my IELTS result, the site says my candidate number GB773A004417 is not "
         "recognised.",
         ("GB773A004417",), True),  # English
    Case("payroll_number",
         "Our HR team uses your portal and my payslips won't load since the update. Payroll no: 00731562",
         ("00731562",), True),  # English
    Case("shareholder_reference_number",
         "The dividends stopped arriving; according to the last statement my shareholder reference "
         "number is C0000882716.",
         ("C0000882716",), True),  # English
    Case("diving_certification_number",
         "lost my padi card on holiday lol, cert number 1907C4482, can u reprint it and post it",
         ("1907C4482",), True),  # English
    Case("military_service_number",
         "For the veterans' discount your form wants my service number. Mine is 25123456, Royal Navy, "
         "retired 2015.",
         ("25123456",), True),  # English
    Case("travel_insurance_policy_number",
         "I need to claim for the canceled trip to Lisbon, my travel insurence polcy no. is "
         "TRV-9921-4408-UK, what documents do u need?",
         ("TRV-9921-4408-UK",), True),  # English
    # ---------------------------------------------------------------- German
    Case("zoo_annual_pass_number",
         "Meine Jahreskartennummer für den Tierpark lautet JK-2026-118734, die Karte wurde aber nie "
         "zugeschickt.",
         ("JK-2026-118734",), True),  # German
    Case("fishing_licence_number",
         "07/4419/2025 – das ist die Nummer auf meinem Fischereischein; bitte tragen Sie sie bei der "
         "Bestellung der Vereinskarte ein.",
         ("07/4419/2025",), True),  # German
    Case("disability_pass_number",
         "Gilt die Ermäßigung auch im Onlineshop? Meine Schwerbehindertenausweisnummer: SB-31-0088214",
         ("SB-31-0088214",), True),  # German
    # ---------------------------------------------------------------- French
    Case("sports_federation_licence",
         "Mon numéro de licence FFF est le 2544718903, je voudrais le faire floquer sur le maillot du club.",
         ("2544718903",), True),  # French
    Case("transit_pass_number",
         "J'ai perdu ma carte dans le métro (passe Navigo n° 0428 7716 3390), pouvez-vous la bloquer ?",
         ("0428 7716 3390",), True),  # French
    Case("home_insurance_policy_number",
         "Le numéro de mon contrat d'assurance habitation, HAB-75-00918273, figure bien sur l'attestation "
         "que vous m'avez envoyée ?",
         ("HAB-75-00918273",), True),  # French
    # ---------------------------------------------------------------- Spanish
    Case("bar_association_number",
         "Soy abogada y necesito la factura a nombre del despacho; mi numero de colegiada del ICAM es 98217.",
         ("98217",), True),  # Spanish
    Case("residents_parking_permit",
         "Tengo la tarjeta de estacionamiento para residentes TER-28-114502, ¿me sirve para el parking de "
         "su tienda?",
         ("TER-28-114502",), True),  # Spanish
    Case("ski_pass_number",
         "Compré el forfait de temporada por internet, pero en los tornos no funciona: número de forfait "
         "3FZ-0091-7762-K.",
         ("3FZ-0091-7762-K",), True),  # Spanish
    # ---------------------------------------------------------------- Portuguese
    Case("life_insurance_policy_number",
         "Preciso da segunda via da apólice do meu seguro de vida, número VG-0092.118.337-5, que não "
         "chegou pelo correio.",
         ("VG-0092.118.337-5",), True),  # Portuguese
    Case("public_exam_registration_number",
         "Meu número de inscrição no concurso é 20261184472 e o boleto da taxa ainda não foi gerado.",
         ("20261184472",), True),  # Portuguese
    # ---------------------------------------------------------------- Italian
    Case("theatre_subscription_number",
         "Ho l'abbonamento alla stagione di prosa (tessera ABB-24/0712), ma il mio posto risulta in "
         "vendita come libero.",
         ("ABB-24/0712",), True),  # Italian
    Case("museum_card_number",
         "il numero della mia tessera musei annuale è AM-2026-55081 ma all'ingresso dicono che è scaduta, "
         "com'è possibile?",
         ("AM-2026-55081",), True),  # Italian
    # ---------------------------------------------------------------- Dutch
    Case("municipal_discount_pass",
         "Het nummer van mijn Ooievaarspas, 6034 1190 2278, wordt niet geaccepteerd voor de korting in "
         "jullie webshop.",
         ("6034 1190 2278",), True),  # Dutch
    Case("allotment_garden_plot",
         "Kunnen jullie het zaaigoed naar het complex sturen? Mijn tuinnummer op de volkstuin is 112B.",
         ("112B",), True),  # Dutch
    # ---------------------------------------------------------------- Polish
    Case("large_family_card_number",
         "Mój numer Karty Dużej Rodziny to KDR/14/0288173, a rabat nie został naliczony.",
         ("KDR/14/0288173",), True),  # Polish
    Case("tourist_association_membership",
         "Zniżka dla członków nie działa - legitymacja członkowska PTTK nr 0412877 jest ważna do końca roku.",
         ("0412877",), True),  # Polish
    # ---------------------------------------------------------------- Turkish
    Case("title_deed_number",
         "Konut sigortası için tapu numaramı istemişsiniz: 34-1182-0045.",
         ("34-1182-0045",), True),  # Turkish
    Case("private_pension_contract_number",
         "BES sözleşme numaram 88120044719, katkı payı iadesi hesabıma ne zaman yatar?",
         ("88120044719",), True),  # Turkish
    # ---------------------------------------------------------------- Russian
    Case("pool_pass_number",
         "Номер моего абонемента в бассейн — БС-004812, а турникет его не пропускает уже неделю.",
         ("БС-004812",), True),  # Russian
    Case("voluntary_health_insurance_policy",
         "Прошу привязать к записи на приём мой полис ДМС 0918-226714/25, в прошлый раз его не учли.",
         ("0918-226714/25",), True),  # Russian
    # ---------------------------------------------------------------- Ukrainian
    Case("veteran_certificate_number",
         "Для знижки ветеранам вказую номер посвідчення учасника бойових дій: АБ 118204.",
         ("АБ 118204",), True),  # Ukrainian
    # ---------------------------------------------------------------- Arabic
    Case("sports_club_membership",
         "رقم عضويتي في النادي هو CLB-55128، لكن التطبيق يقول إن الاشتراك منتهٍ.",
         ("CLB-55128",), True),  # Arabic
    Case("engineers_syndicate_number",
         "أنا مهندس مدني، وقيدي في نقابة المهندسين برقم 118427، أرجو إضافته إلى الفاتورة.",
         ("118427",), True),  # Arabic
    # ---------------------------------------------------------------- Chinese
    Case("housing_provident_fund_account",
         "我的公积金账号是 2103 8817 4402，办理贷款时需要填写，请帮我核对。",
         ("2103 8817 4402",), True),  # Chinese
    Case("exam_admission_ticket_number",
         "成绩查询页面一直提示准考证号错误，我的准考证号是2026110108437。",
         ("2026110108437",), True),  # Chinese
    # ---------------------------------------------------------------- Japanese
    Case("bicycle_registration_number",
         "自転車の防犯登録番号は13-4827716です。盗難届に必要なので控えを再発行してください。",
         ("13-4827716",), True),  # Japanese
    Case("long_term_care_insurance_number",
         "0001184723が母の介護保険の被保険者番号です。レンタルの手すりの契約に使ってください。",
         ("0001184723",), True),  # Japanese
    # ---------------------------------------------------------------- Korean
    Case("monthly_parking_pass",
         "정기주차권 번호 PK-0771-2219 로 등록된 차량을 바꾸고 싶어요.",
         ("PK-0771-2219",), True),  # Korean
    Case("employee_number",
         "회사 복지몰에서 할인이 안 돼요. 제 사번은 20180447 입니다.",
         ("20180447",), True),  # Korean
    # ---------------------------------------------------------------- Hindi
    Case("ration_card_number",
         "मेरा राशन कार्ड नंबर UP-4418-0092-7731 है, क्या इससे गैस सब्सिडी मिलेगी?",
         ("UP-4418-0092-7731",), True),  # Hindi
    # ---------------------------------------------------------------- Indonesian
    Case("cooperative_membership_number",
         "Nomor anggota koperasi saya KSP-00471-2026, tolong cek kenapa cicilan bulan ini belum tercatat.",
         ("KSP-00471-2026",), True),  # Indonesian
    # ---------------------------------------------------------------- Vietnamese
    Case("pharmacist_practice_certificate",
         "Tôi là dược sĩ, số chứng chỉ hành nghề dược của tôi là 0871/CCHN-D-SYT-HNO, cần ghi vào hóa đơn.",
         ("0871/CCHN-D-SYT-HNO",), True),  # Vietnamese
    # ---------------------------------------------------------------- Swedish
    Case("housing_queue_number",
         "Mitt könummer hos bostadsförmedlingen är BF-0088213 – syns det att jag har betalat årsavgiften?",
         ("BF-0088213",), True),  # Swedish
    # ---------------------------------------------------------------- Hungarian
    Case("pet_insurance_policy_number",
         "A kötvényszámom KB-2026-004417, a kutyám biztosításához tartozik, de a számlán más szerepel.",
         ("KB-2026-004417",), True),  # Hungarian
]


BUSINESS5: list[str] = [
    # ---------------------------------------------------------------- English
    "My order 40028817 arrived with only 2 of the 3 items; the missing one is SKU KB-7741-BLK.",  # English
    "I opened ticket #558213 with your help desk on 14 November and nobody has replied since.",  # English
    "My parcel with tracking number 1Z 999 AA1 01 2345 6784 has been stuck in Memphis since Monday.",  # English
    "The invoice INV-2026-00417 I received charges me $149.99 instead of the advertised $119.99.",  # English
    "After updating my router to firmware 3.14.2 it shows error E-502 every 20 minutes.",  # English
    "I bought the XR-220 Pro at your store #0417 on 3 December and the box had a broken seal.",  # English
    "My case number with your support team is CS-2026-118204, please link it to this chat.",  # English
    "My flight LH 1402 on 12 December was cancelled, so I "
    "need my order 7730219 delivered on the 18th instead.",  # English
    "The return label for my RMA 88-4471-R printed at 50% size and the courier refused it.",  # English
    "I was charged 21% VAT on invoice 2026/11/0883 although my order was shipped to Norway.",  # English
    "Your app version 8.2.0 (build 4417) crashes when I open my order history on iOS 18.1.",  # English
    "I ordered 6 boxes from lot L2409-33B and two of them contain the older formula.",  # English
    "My subscription renews on 1 January at €9.99/month, but the pricing page says €7.99 for plan Basic-12.",  # English
    "Error 0x80070057 appears when I try to install your driver package 5.1.7 on my laptop.",  # English
    "I left my umbrella in Room 214 of your convention centre during Tuesday's 10:30 session.",  # English
    "The manual for my KX-9000 tells me to see page 47, but the PDF only has 32 pages.",  # English
    "My package left warehouse DC-07 on 2026-11-28 and the estimated delivery keeps moving.",  # English
    "I used promo code WINTER25 on my order 5501983 but the 25% discount wasn't applied.",  # English
    "My replacement part 00-1184-772 is backordered until week 3 of 2027, according to your last update.",  # English
    "Batch 24C117 of the formula I bought was recalled - is my order 3309172 affected?",  # English
    "I'm on plan Pro 500 GB and the dashboard says I've used 512 GB, with error QUOTA-413.",  # English
    "My order of 250 units of SKU 7741-220-GR was split "
    "into 3 shipments, but I only got 2 tracking numbers.",  # English
    "My charger from production week 2025-W48 overheats; I bought it at your store 112 in October.",  # English
    "My ticket 77120 was closed automatically after 72 hours, but the bug in release 2.6.1 is still there.",  # English
    "I paid 3 x £45.00 for row K, seats 14-16, for the 19:30 show on 20 December, yet my confirmation "
    "shows only 2 seats.",  # English
    # ---------------------------------------------------------------- German
    "Mein Paket mit der Sendungsnummer 00340434161094042557 liegt seit Freitag im Verteilzentrum Hamburg.",  # German
    "Meine Bestellung 302-7741829 enthielt nur 4 statt 5 Artikel, es fehlt Artikelnummer 10044718.",  # German
    "Nach dem Update auf Version 2.4.1 zeigt mein Geschirrspüler SMV46KX01E den Fehler E:24.",  # German
    # ---------------------------------------------------------------- French
    "Ma commande n° FR-884172 est arrivée le 4 décembre avec un colis abîmé, référence article 3366-B.",  # French
    "J'ai reçu la facture F2026-00917 de 89,90 € alors que mon devis était de 79,90 €.",  # French
    "Mon ticket 45128 chez votre support est ouvert depuis 10 jours et l'erreur 0xC004F074 est toujours là.",  # French
    # ---------------------------------------------------------------- Spanish
    "Mi pedido 112-4471982 llegó con el modelo equivocado: pedí el TX-40 y me enviaron el TX-30.",  # Spanish
    "El número de seguimiento de mi paquete es ES2026118830447 y lleva 6 días en aduanas.",  # Spanish
    "Compré 3 unidades del lote 24-0917 en la tienda 058 y la fecha de caducidad es 03/2026.",  # Spanish
    # ---------------------------------------------------------------- Portuguese
    "Meu pedido 7712094 foi cobrado duas vezes: R$ 259,90 no dia 2 e de novo no dia 5.",  # Portuguese
    "O meu chamado 2026-44187 no suporte diz erro 504 ao emitir a nota fiscal 000.118.204.",  # Portuguese
    # ---------------------------------------------------------------- Italian
    "Il mio ordine n. 4400-88172 risulta consegnato, ma il "
    "pacco con tracking 1Z8V7741680412 non è mai arrivato.",  # Italian
    "La versione 5.0.3 della vostra app mi dà errore 1017 quando provo a pagare la fattura 2026/0412.",  # Italian
    # ---------------------------------------------------------------- Dutch
    "Mijn bestelling 2218849 is verzonden met track & trace 3SABCD0123456, maar de status blijft 'aangemeld'.",  # Dutch
    "Ik heb 2 stuks van artikelnummer 8718-441 besteld in filiaal 214 en kreeg een factuur van € 64,50.",  # Dutch
    # ---------------------------------------------------------------- Polish
    "Moje zamówienie nr 19/11/2026/8841 dotarło bez instrukcji do modelu WM-8200.",  # Polish
    "Moje zgłoszenie 77418 w Waszym serwisie dotyczy błędu F05 w pralce z partii 2409-K.",  # Polish
    # ---------------------------------------------------------------- Turkish
    "Siparişim 1184472031 kargoya verildi ama takip numarası 7712004419 hiç güncellenmiyor.",  # Turkish
    "Faturam FTR2026000417 üzerinde 1.299,90 TL yazıyor, kampanyada fiyat 999,90 TL idi.",  # Turkish
    # ---------------------------------------------------------------- Russian
    "Мой заказ № 88120-447 пришёл без зарядки, артикул 4410-17.",  # Russian
    "Моя заявка 2026-11-0417 в поддержке закрыта, но ошибка 0x0000007B на версии 11.2 осталась.",  # Russian
    # ---------------------------------------------------------------- Ukrainian
    "Моє замовлення 5510782 досі не відправлене, хоча на сайті було написано «доставка за 2 дні».",  # Ukrainian
    # ---------------------------------------------------------------- Arabic
    "طلبي رقم 7741882 وصل ناقصاً قطعتين من المنتج SKU AR-220.",  # Arabic
    "فاتورتي رقم INV-88417 تحتوي على خصم 15% فقط بدلاً من 20%.",  # Arabic
    # ---------------------------------------------------------------- Chinese
    "我的订单号 2026120588174 显示已签收，但我没有收到包裹。",  # Chinese
    "我的工单 TK-44718 已经三天没人处理，错误代码 E-1027，固件版本 v2.3.8。",  # Chinese
    # ---------------------------------------------------------------- Japanese
    "私の注文番号 250-4471882-0917 の商品がまだ届いていません。",  # Japanese
    "バージョン 4.2.1 にアップデートしたら、私のテレビ（型番 KJ-55X90）でエラーコード E-3021 が出ます。",  # Japanese
    # ---------------------------------------------------------------- Korean
    "제 주문번호 20261205-0044718 상품이 아직 배송 준비 중이에요.",  # Korean
    "제 문의 번호 CS-77120 관련인데요, 모델 SM-R910 펌웨어 1.4.2 에서 오류 코드 E07이 계속 떠요.",  # Korean
    # ---------------------------------------------------------------- Hindi
    "मेरा ऑर्डर नंबर 408-1184473 है और इनवॉइस में ₹1,499 की जगह ₹1,999 लिखा है।",  # Hindi
    # ---------------------------------------------------------------- Indonesian
    "Pesanan saya nomor 2612058841 sudah 5 hari belum dikirim, dan resi JP8841720045 belum aktif.",  # Indonesian
    # ---------------------------------------------------------------- Vietnamese
    "Đơn hàng của tôi số 884172 giao thiếu 2 sản phẩm mã SP-0417, hóa đơn số 0012847.",  # Vietnamese
    # ---------------------------------------------------------------- Swedish
    "Min beställning 4471-0882 kom utan laddare, artikelnummer 100-447-18, och kvittot visar 1 299 kr.",  # Swedish
    # ---------------------------------------------------------------- Hungarian
    "A rendelésem száma 70041882, de a HU-220 cikkszámú termékből 3 helyett csak 1 darab érkezett.",  # Hungarian
]
