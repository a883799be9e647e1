"""Unseen PII battery no. 3 (2026-12-05).

Two lists for checking the PII scrubber used on multilingual customer-support
logs before they go into LLM calibration sets:

* ``UNSEEN3``: about fifty sentences a customer might write to support, each
  holding exactly one personal value of a kind that was never named to whoever
  wrote the detectors (tenancy agreements, student loans, child benefit, civil
  certificates, adoption, hearing aids, dental/lab/telehealth patient ids,
  ride-hailing and delivery customer ids, EV charging cards, carrier and
  broadband accounts, storage units, cemetery plots, estates, visa/citizenship/
  asylum files, seaman's books, jury summonses, fines, bail, probation, ...).
  Every case has a cue word or phrase saying what the value is.  ``values``
  lists the raw substrings that must NOT survive scrubbing.
* ``BUSINESS3``: about sixty support sentences full of non-personal business
  identifiers (orders, tracking numbers, invoices, tickets, SKUs, model
  numbers, promo codes, error codes, versions, prices, dates, opening hours,
  store numbers, warehouse locations, lots, plans, rate limits, rooms, flights)
  that must come out of the scrubber unchanged.

This battery was written without seeing the scrubber code or the other
batteries.  All values are invented.
"""

from calibration.pii_batteries import Case


def _p(kind: str, text: str, value: str) -> Case:
    return Case(kind=kind, text=text, values=(value,), cue=True)


UNSEEN3: list[Case] = [
    # --- English (25) ---
    _p("student_loan_reference", "Student loan reference: SL/88213047/K - I need a copy of my repayment schedule.",
       "SL/88213047/K"),
    _p("adoption_case_reference",
       "Could you confirm you received the documents for our adoption case reference ADP-2023-0451?",
       "ADP-2023-0451"),
    _p("hearing_aid_fitting_id",
       "HA-FIT-66120 is my hearing-aid fitting ID, the left one keeps whistling since the last adjustment.",
       "HA-FIT-66120"),
    _p("lab_sample_barcode",
       "The lab sample barcode on my blood test tube was LBX0091827364, has it been processed yet?",
       "LBX0091827364"),
    _p("telehealth_portal_id",
       "I can't log in to the video consult, my telehealth patient portal ID is TPH-7Q4K-2281.",
       "TPH-7Q4K-2281"),
    _p("school_pupil_number", "Pupil number for my daughter: A823199204117, she moved schools in September.",
       "A823199204117"),
    _p("dating_profile_id", "My profile on your dating app (ID 8F3K29XQ77) was banned by mistake, please review it.",
       "8F3K29XQ77"),
    _p("food_delivery_customer_id",
       "Delivery app customer ID FD99218743 - the refund for last night's order never showed up.",
       "FD99218743"),
    _p("ev_charging_card_id",
       "My EV charging card ID is NL-EVC-C00482917-3 and it keeps getting rejected at station 12.",
       "NL-EVC-C00482917-3"),
    _p("smart_home_hub_id",
       "The smart home hub ID hub-3f9a-77c2-e01b is not showing up in the app after the firmware update.",
       "hub-3f9a-77c2-e01b"),
    _p("baby_monitor_pairing_code",
       "After the update the baby monitor pairing code 482 913 is refused, what should I do?",
       "482 913"),
    _p("storage_unit_rental_number",
       "I rent storage unit no. 4B-217 at your north site and want to cancel at the end of the month.",
       "4B-217"),
    _p("storage_gate_code",
       "The gate code you gave me for the storage facility, 7731#, doesn't open the barrier anymore.",
       "7731#"),
    _p("cemetery_plot_number",
       "We'd like to arrange maintenance for cemetery plot C-14-09 where my late father is buried.",
       "C-14-09"),
    _p("estate_reference",
       "The estate reference for my mother's will is PRB-2025-003318; the solicitor asked me to quote it.",
       "PRB-2025-003318"),
    _p("funeral_arrangement_number",
       "Funeral arrangement number FA 2026/1187 - please send all correspondence to me, not my brother.",
       "FA 2026/1187"),
    _p("citizenship_application_number",
       "My citizenship application number is CIT-0098-4471-2 and the status page has been blank for weeks.",
       "CIT-0098-4471-2"),
    _p("asylum_case_number",
       "My asylum case number 2025-ASY-118092 was on the letter, can an interpreter be booked for the interview?",
       "2025-ASY-118092"),
    _p("seamans_book_number", "Seaman's book no. SB 0417723 expires in March; which documents do you need to renew it?",
       "SB 0417723"),
    _p("crew_id", "Crew ID: CRW-55190-A, I was rostered on the wrong vessel for the January rotation.", "CRW-55190-A"),
    _p("jury_summons_number",
       "I received jury summons number JS-447120-B but I'll be abroad that week.",
       "JS-447120-B"),
    _p("court_fine_reference",
       "I paid the court fine with reference CF/99/2026/004517 but it still shows as outstanding.",
       "CF/99/2026/004517"),
    _p("bail_reference", "My bail reference is BL-7730-26; I need to confirm the reporting conditions.", "BL-7730-26"),
    _p("work_permit_number", "Work permit number WP 2291 8834 06 - my employer says it needs to be re-verified.",
       "WP 2291 8834 06"),
    _p("speeding_fine_reference",
       "The speeding fine reference on the notice sent to me is SPD-4409-1187-2, can I pay in instalments?",
       "SPD-4409-1187-2"),
    # --- German ---
    _p("child_benefit_number", "Meine Kindergeldnummer ist 215FK382914, seit November kommt keine Zahlung mehr.",
       "215FK382914"),
    # --- French ---
    _p("visa_application_reference",
       "Voici la référence de ma demande de visa : FRA7BJ20268812345, mon rendez-vous a été annulé.",
       "FRA7BJ20268812345"),
    # --- Spanish ---
    _p("traffic_ticket_number",
       "Me llegó una multa de tráfico con número de expediente 28-079-004417-9 y quiero recurrirla.",
       "28-079-004417-9"),
    # --- Portuguese ---
    _p("ev_charging_card_id",
       "O número do meu cartão de carregamento para carro elétrico é PT-MOB-00391827 e é recusado em todos os postos.",
       "PT-MOB-00391827"),
    # --- Italian ---
    _p("broadband_customer_id",
       "Codice cliente fibra: 7001928374 - la linea di casa è giù da ieri sera.",
       "7001928374"),
    # --- Dutch ---
    _p("tenancy_agreement_number",
       "Mijn huurcontractnummer is HC/2022/5581; kunt u de huurverhoging van januari toelichten?",
       "HC/2022/5581"),
    # --- Polish ---
    _p("mobile_carrier_account_number",
       "Numer mojego konta u operatora komórkowego to 1.18273645, chcę zmienić taryfę.",
       "1.18273645"),
    # --- Russian ---
    _p("work_permit_number", "Мой патент на работу: серия 77 № 2409183, работодатель просит копию.", "77 № 2409183"),
    # --- Ukrainian ---
    _p("refugee_id_card", "Номер мого посвідчення біженця — РБ 004719, чи потрібно вказувати його в анкеті?",
       "РБ 004719"),
    # --- Czech ---
    _p("storage_unit_rental_number",
       "Číslo mé smlouvy o pronájmu skladovacího boxu je SB-3392-P, chci ji prodloužit o tři měsíce.",
       "SB-3392-P"),
    # --- Swedish ---
    _p("citizenship_application_number",
       "Mitt ärendenummer för medborgarskapsansökan är 21-774018, när kan jag vänta mig ett beslut?",
       "21-774018"),
    # --- Greek ---
    _p("dental_patient_number",
       "Ο αριθμός ασθενούς μου στο οδοντιατρείο είναι ΟΔ-48213, θέλω να αλλάξω το ραντεβού.",
       "ΟΔ-48213"),
    # --- Chinese ---
    _p("food_delivery_customer_id", "我的外卖平台客户编号是WM20931847，退款一直没到账。", "WM20931847"),
    # --- Japanese ---
    _p("kindergarten_place_number", "娘の幼稚園の入園受付番号は YN-2026-0381 です。書類の送付先を変更したいです。",
       "YN-2026-0381"),
    # --- Korean ---
    _p("speeding_fine_reference", "제 과속 범칙금 납부번호는 0417-2026-88213-5입니다. 분할 납부가 가능한가요?",
       "0417-2026-88213-5"),
    # --- Arabic (possessive suffixes: تأشيرتي = my visa, حسابي = my account) ---
    _p("visa_application_reference", "رقم طلب تأشيرتي هو VAP-7781-2026، متى سيصدر القرار؟", "VAP-7781-2026"),
    _p("mobile_carrier_account_number", "هذا رقم حسابي لدى شركة الاتصالات: 5502918374، أريد إلغاء الخط.", "5502918374"),
    # --- Hebrew ---
    _p("probation_case_number", "מספר התיק שלי בשירות המבחן הוא 4471-26, אני צריך לדחות את הפגישה.", "4471-26"),
    # --- Hindi ---
    _p("birth_certificate_number", "मेरी बेटी के जन्म प्रमाण पत्र का नंबर B-2019-DL-0047712 है, नाम में सुधार करवाना है।",
       "B-2019-DL-0047712"),
    # --- Bengali ---
    _p("marriage_certificate_number", "আমার বিবাহ নিবন্ধন নম্বর MR-2021-08834, নাম পরিবর্তনের জন্য এটি লাগবে।",
       "MR-2021-08834"),
    # --- Turkish (possessive suffixes: sözleşmemin = of my contract, numaram = my number) ---
    _p("tenancy_agreement_number", "Kira sözleşmemin numarası KS-2024-55102, depozito iadesi ne zaman yapılacak?",
       "KS-2024-55102"),
    _p("student_loan_reference", "Öğrenim kredisi borç numaram KB-2019-0447812, taksitlerimi ertelemek istiyorum.",
       "KB-2019-0447812"),
    # --- Indonesian ---
    _p("ride_hailing_rider_id",
       "ID penumpang saya di aplikasi ojek adalah PSG-77120934, tolong cek tagihan ganda kemarin.",
       "PSG-77120934"),
    # --- Vietnamese ---
    _p("broadband_customer_id",
       "Mã khách hàng internet cáp quang nhà tôi là HNFD-0219384, mạng bị mất từ sáng nay.",
       "HNFD-0219384"),
    # --- Thai ---
    _p("pharmacy_loyalty_card", "หมายเลขบัตรสมาชิกร้านขายยาของฉันคือ 7712-4408-1935 ค่ะ ช่วยเพิ่มแต้มให้ด้วย",
       "7712-4408-1935"),
]


BUSINESS3: list[str] = [
    # --- English (30) ---
    "Your order #A-4471920 shipped on 2026-11-28 via UPS, tracking 1Z999AA10123456784.",
    "Invoice INV-2026-00871 for €1,249.00 was issued on 3 December and is due within 30 days.",
    "Ticket #CS-558201 has been escalated to tier 2; expect a reply within 48 hours.",
    "SKU BLK-TS-042-M is back in stock: 120 units arrived at warehouse aisle 14, bay C.",
    "Use promo code WINTER25 at checkout to get 25% off orders over $80 until Dec 31.",
    "Error 0x80070005 appears when installing version 4.12.3 (build 20261104) on Windows 11.",
    "The Pro plan allows 600 API requests per minute and 5,000,000 requests per month.",
    "Our store #0412 is open Monday to Saturday 9:00-21:00 and Sunday 10:00-18:00.",
    "Lot 23K0917 of the 500 ml bottles was recalled; check the lot code printed under the cap.",
    "USPS tracking 9400 1118 9956 1234 5678 90 shows the parcel at the Memphis hub since 07:42.",
    "FedEx shipment 7794 3120 5581 will arrive on Thursday between 10:30 and 14:00.",
    "DHL Express waybill 4471920385 cleared customs in Leipzig this morning.",
    "Royal Mail item RN123456785GB reached the delivery office on 2 Dec at 11:15.",
    "Model KX-TG6843 supports up to 6 handsets; firmware 2.1.7 fixes the echo issue.",
    "Flight LH 441 departs Frankfurt at 13:55 from gate B44, and the cargo cut-off is 11:00.",
    "The workshop is in room 4.17 on floor 4; the projector in room 2.03 is out of order.",
    "Order 112-4859203-7761045 contains 3 items totalling $147.97 including $9.99 shipping.",
    "Case 00098123 was closed after replacement part P/N 5A-22019 was shipped.",
    "HTTP 429 is returned after 100 requests per 10 seconds; wait for the Retry-After interval.",
    "Release 3.8.0-rc2 introduced regression BUG-20931; hotfix 3.8.1 ships on Monday.",
    "Return authorization RMA-66120 is valid for 14 days; ship the unit in its original box.",
    "The Basic plan is $19.99 and Premium is $49.99; the $30.00 difference is refunded in 5-7 business days.",
    "Purchase order PO-7781-2026 for 2,400 units of item 30-118-44 was approved on 2026-12-01.",
    "Quote Q-2026-1187 is valid until 15 January 2027 at a unit price of £3.40.",
    "Branch 057 in the city centre closes at 16:00 on December 24 and reopens on December 27.",
    "Pallet location WH2-R07-S03-L2 holds 48 cartons of SKU 880-1129.",
    "Error code E-214 on dishwasher model SMV4HTX31E means the drain pump is blocked.",
    "The 2026 catalogue lists 1,250 products in 38 categories, priced from $2.49 to $899.",
    "Container MSCU 4471920 left Rotterdam on 28 November and is due in Newark on 12 December.",
    "Coupon SAVE10NOW takes $10 off and cannot be combined with the 3-for-2 offer on item 77104.",
    # --- German ---
    "Ihre Bestellung Nr. 302-8841937 wurde am 02.12.2026 mit DHL versandt, Sendungsnummer 00340434161234567890.",
    "Die Rechnung RE-2026-4471 über 389,90 € ist bis zum 15.12.2026 fällig.",
    # --- French ---
    "Votre commande n° FR-77120934 sera livrée par Colissimo, numéro de suivi 6A12345678901.",
    "Le code promo NOEL15 donne 15 % de réduction jusqu'au 24 décembre à minuit.",
    # --- Spanish ---
    "El pedido 4471-ES-2026 incluye 2 unidades del modelo XR-550 a 129,00 € cada una.",
    "La tienda n.º 215 abre de lunes a viernes de 10:00 a 20:30 y los sábados hasta las 14:00.",
    # --- Portuguese ---
    "O código de erro E-502 aparece na versão 2.4.1 do aplicativo; a correção sai na 2.4.2.",
    "A fatura nº 000.118.204 no valor de R$ 1.249,90 vence em 10/12/2026.",
    # --- Italian ---
    "Il ticket di assistenza #IT-66120 è stato chiuso dopo la sostituzione del pezzo cod. 44-1187-B.",
    # --- Dutch ---
    "Uw pakket met PostNL-trackingcode 3SABCD1234567 wordt morgen tussen 14:00 en 16:30 bezorgd.",
    # --- Polish ---
    "Zamówienie nr 2026/12/004471 wysłano przez InPost, numer przesyłki 620123456789012345678901.",
    # --- Russian ---
    "Заказ № 7741-2290 передан в СДЭК, трек-номер 1098273645, доставка 8–10 декабря.",
    "Тариф «Бизнес» включает 50 ГБ и 1000 минут за 690 ₽ в месяц.",
    # --- Ukrainian ---
    "Замовлення № 558201 відправлено Новою поштою, ТТН 20450123456789, вартість доставки 85 грн.",
    # --- Czech ---
    "Faktura č. 2026001187 na částku 4 590 Kč je splatná do 20. 12. 2026.",
    # --- Swedish ---
    "Artikelnummer 702.611.50 finns i lager i varuhus 118, gång 23, plats 14.",
    # --- Greek ---
    "Η παραγγελία με αριθμό 10045871 θα παραδοθεί στις 9 Δεκεμβρίου, κόστος αποστολής 3,50 €.",
    # --- Chinese ---
    "您的订单号 2026120588137745 已发货，顺丰运单号 SF1402938475612，预计周五送达。",
    "型号 MX-3200 的固件版本 V2.3.15 修复了错误代码 E07 的问题。",
    # --- Japanese ---
    "ご注文番号 250-8841937-0021 の商品は、ヤマト運輸の伝票番号 4471-2290-3381 で発送済みです。",
    "店舗番号 0412 の営業時間は 10:00〜20:00 です。12月31日は 18:00 閉店となります。",
    # --- Korean ---
    "주문번호 20261205-0001187 상품은 CJ대한통운 운송장번호 6894 1234 5678로 발송되었습니다.",
    # --- Arabic ---
    "تم شحن الطلب رقم 88213047 وسيصل خلال 3 إلى 5 أيام عمل، والمبلغ الإجمالي 249 ريالاً.",
    # --- Hebrew ---
    "קוד השגיאה 0xC004F074 מופיע בגרסה 22H2; העדכון KB5034441 פותר את הבעיה.",
    # --- Hindi ---
    "ऑर्डर संख्या OD4471920385 का ₹1,299 का रिफ़ंड 5–7 कार्यदिवसों में मूल भुगतान माध्यम में आ जाएगा।",
    # --- Bengali ---
    "চালান নম্বর INV-BD-2026-0871 অনুযায়ী মোট মূল্য ৳৪,৫০০, ডেলিভারি ৭ ডিসেম্বর।",
    # --- Turkish ---
    "Sipariş numarası TR-2026-55102 olan ürün Yurtiçi Kargo ile gönderildi, takip numarası 7294018837.",
    # --- Indonesian ---
    "Kode promo HEMAT50 berlaku untuk pembelian minimal Rp200.000 sampai 31 Desember 2026.",
    # --- Vietnamese ---
    "Đơn hàng số VN2026-118734 gồm 3 sản phẩm, tổng cộng 1.250.000 ₫, giao trước ngày 10/12.",
    # --- Thai ---
    "หมายเลขคำสั่งซื้อ TH-66120-2026 จัดส่งโดย Kerry Express เลขพัสดุ KEX123456789 ถึงภายใน 2 วัน",
]
