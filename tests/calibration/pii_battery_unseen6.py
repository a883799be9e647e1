"""Unseen PII battery no. 6 for the multilingual support-log PII scrubber.

Written 2026-12-06 without seeing the detectors, their patterns, or any other battery's sentences.

UNSEEN6 holds 60 customer-support sentences (chat or e-mail messages a customer writes to a company),
each carrying exactly one personal identifier of a kind not used in earlier batteries, always with a
cue word or phrase (before or after the value, possessive, compound or inflected, in any script).
Every listed value must be gone after scrubbing.

BUSINESS6 holds 60 first-person support sentences in the same mix of languages that contain only
non-personal business identifiers and numbers (orders, invoices, tracking numbers, tickets, SKUs,
models, error codes, versions, prices, dates, batches, flights, rooms, promo codes, part numbers).
They must come out of the scrubber unchanged.

All values are invented. The language of each entry is noted in a trailing comment.
"""

from calibration.pii_batteries import Case

UNSEEN6: list[Case] = [
    # ---------------------------------------------------------------- English (15)
    Case("horse_passport_number",
         "Hi, I'm moving my mare to a new livery yard and your booking form rejects her horse passport "
         "number 826041001234567, can you check why?",
         ("826041001234567",), True),  # English
    Case("pigeon_ring_number",
         "The race entry failed for my bird; its ring number is GB24N18327, please re-register it for "
         "Saturday's race.",
         ("GB24N18327",), True),  # English
    Case("tithe_envelope_number",
         "Could you update the giving portal so my donations are credited to offering envelope no. 1187 "
         "instead of the old one?",
         ("1187",), True),  # English
    Case("drone_operator_id",
         "The drone insurance checkout keeps saying my operator ID GBR-OP-7XK2M9QP4RTE is invalid, but "
         "that's exactly what the CAA issued.",
         ("GBR-OP-7XK2M9QP4RTE",), True),  # English
    Case("mail_redirection_reference",
         "I set up a mail redirection last month (reference RDX-40917352) but letters are still going to "
         "my old flat.",
         ("RDX-40917352",), True),  # English
    Case("job_application_reference",
         "I applied for the warehouse supervisor role; my candidate reference is CAND-559021 and I haven't "
         "heard back about the interview.",
         ("CAND-559021",), True),  # English
    Case("clinical_trial_participant_id",
         "The study app logged me out and now asks for my trial participant ID, which is 104-0037 on my "
         "consent sheet.",
         ("104-0037",), True),  # English
    Case("cord_blood_storage_account",
         "Please send this year's storage invoice for our baby's cord blood account CB-77120-43 as a PDF "
         "instead of by post.",
         ("CB-77120-43",), True),  # English
    Case("domain_transfer_auth_code",
         "I'm moving my domain to another registrar and the EPP auth code you gave me, 7hQv2Lp!x9Zr, is "
         "rejected as expired.",
         ("7hQv2Lp!x9Zr",), True),  # English
    Case("porting_authorisation_code",
         "I'm switching networks, please confirm my PAC code XQT481927 is still valid until Friday.",
         ("XQT481927",), True),  # English
    Case("pgp_key_fingerprint",
         "For encrypted replies please use my PGP key with fingerprint "
         "7A3F 91C2 0B5E 44D8 9E16 C7A0 3B29 D4F1 8E62 05AC, not the old one.",
         ("7A3F 91C2 0B5E 44D8 9E16 C7A0 3B29 D4F1 8E62 05AC",), True),  # English
    Case("mot_test_certificate_number",
         "The garage uploaded the wrong result; my car's MOT test certificate number should be "
         "4821 7730 9915, can you correct your record?",
         ("4821 7730 9915",), True),  # English
    Case("child_maintenance_case_number",
         "The payments deducted by my ex's employer haven't reached me; the child maintenance case number "
         "is CMS 1204 5567 832.",
         ("CMS 1204 5567 832",), True),  # English
    Case("financial_ombudsman_complaint_reference",
         "I've escalated this to the ombudsman and they gave me complaint reference PNX-4829516-K7L1, so "
         "please quote it in your final response.",
         ("PNX-4829516-K7L1",), True),  # English
    Case("money_transfer_control_number",
         "The recipient can't collect the transfer at the agent; the MTCN on my receipt is 482 619 3307.",
         ("482 619 3307",), True),  # English
    # ---------------------------------------------------------------- Spanish (3)
    Case("race_bib_number",
         "Me inscribí en la media maratón pero en la app sale otro corredor con mi dorsal 4127, "
         "¿pueden revisarlo?",
         ("4127",), True),  # Spanish
    Case("scholarship_application_number",
         "Hola, ¿me confirman si recibieron los documentos de mi solicitud de beca n.º BEC-2024-018833? "
         "La plataforma no muestra nada.",
         ("BEC-2024-018833",), True),  # Spanish
    Case("mishandled_baggage_file_reference",
         "Mi maleta no llegó ayer; el número de expediente de equipaje que me dieron en el aeropuerto es "
         "MADIB23456.",
         ("MADIB23456",), True),  # Spanish
    # ---------------------------------------------------------------- French (3)
    Case("building_permit_number",
         "Bonjour, mon permis de construire n° PC 075 112 24 V0012 a enfin été accordé, pouvez-vous lancer "
         "la commande de l'extension ?",
         ("PC 075 112 24 V0012",), True),  # French
    Case("legal_aid_file_number",
         "Mon avocat me demande de vous transmettre le numéro de mon dossier d'aide juridictionnelle : "
         "BAJ 2024/012345.",
         ("BAJ 2024/012345",), True),  # French
    Case("over_indebtedness_file_number",
         "Suite à la décision de la Banque de France, voici la référence de mon dossier de surendettement : "
         "0751-24-003817 ; merci de suspendre les prélèvements.",
         ("0751-24-003817",), True),  # French
    # ---------------------------------------------------------------- German (3)
    Case("broadcasting_fee_contribution_number",
         "Ich bin umgezogen und möchte den Rundfunkbeitrag ummelden, meine Beitragsnummer lautet 412 873 905.",
         ("412 873 905",), True),  # German
    Case("dog_tax_tag_number",
         "Die Hundesteuermarke Nr. 0473 ist beim Spaziergang verloren gegangen – können Sie mir bitte eine "
         "Ersatzmarke schicken?",
         ("0473",), True),  # German
    Case("tyre_storage_ticket_number",
         "Ich möchte meine Winterreifen abholen, die Einlagerungsnummer auf meinem Reifenschein ist "
         "RH-2023-0815-B.",
         ("RH-2023-0815-B",), True),  # German
    # ---------------------------------------------------------------- Portuguese (3)
    Case("consorcio_quota_number",
         "Fui contemplado no consórcio e ninguém me liga; meu grupo/cota é 04512-218, podem verificar a "
         "carta de crédito?",
         ("04512-218",), True),  # Portuguese
    Case("pix_random_key",
         "Cadastrei uma chave Pix aleatória nova, 7d9f0335-8dcc-4054-9bf9-0dbd61d36906, podem usar essa "
         "para o reembolso?",
         ("7d9f0335-8dcc-4054-9bf9-0dbd61d36906",), True),  # Portuguese
    Case("consigned_credit_contract_number",
         "O desconto do crédito consignado continua vindo no contracheque mesmo após a quitação; o contrato "
         "é o nº 0029384712-5.",
         ("0029384712-5",), True),  # Portuguese
    # ---------------------------------------------------------------- Russian (3)
    Case("football_fan_id",
         "Не могу купить билет на матч: сайт пишет, что моя карта болельщика 7735 2048 1196 не активна.",
         ("7735 2048 1196",), True),  # Russian
    Case("safe_deposit_box_number",
         "Подскажите, пожалуйста, когда истекает аренда моей банковской ячейки № 0417 и можно ли продлить "
         "её онлайн?",
         ("0417",), True),  # Russian
    Case("tachograph_driver_card_number",
         "Карта водителя для тахографа RUD0000123456700 не читается после замены, помогите с перевыпуском.",
         ("RUD0000123456700",), True),  # Russian
    # ---------------------------------------------------------------- Mandarin Chinese (2)
    Case("degree_certificate_number",
         "你好，我在你们平台提交的学历证书编号105581202405003218验证不通过，麻烦帮我查一下。",
         ("105581202405003218",), True),  # Mandarin Chinese
    Case("credit_report_number",
         "贷款审批说需要核对我的征信报告编号2024061215302845620318，请问应该在哪里上传？",
         ("2024061215302845620318",), True),  # Mandarin Chinese
    # ---------------------------------------------------------------- Hindi (2)
    Case("pollution_under_control_certificate_number",
         "मेरी गाड़ी का PUC प्रमाणपत्र नंबर DL0010014000234 ऐप में अपडेट नहीं हो रहा, कृपया मदद करें।",
         ("DL0010014000234",), True),  # Hindi
    Case("school_leaving_certificate_number",
         "बेटी के दाख़िले के लिए स्कूल ने ट्रांसफर सर्टिफिकेट नं. TC/2023/0457 दिया है, पर आपके पोर्टल पर "
         "अपलोड नहीं हो रहा।",
         ("TC/2023/0457",), True),  # Hindi
    # ---------------------------------------------------------------- Arabic (2)
    Case("power_of_attorney_number",
         "أرجو تحديث بيانات الحساب بناءً على الوكالة الإلكترونية رقم 441287396 الصادرة من منصة ناجز.",
         ("441287396",), True),  # Arabic
    Case("domestic_worker_recruitment_contract_number",
         "تأخر وصول العاملة المنزلية، ورقم عقد الاستقدام في مساند هو MS-2024-7781203، متى سيتم تحديث الحالة؟",
         ("MS-2024-7781203",), True),  # Arabic
    # ---------------------------------------------------------------- Japanese (2)
    Case("seal_registration_card_number",
         "印鑑登録証の番号（第004512号）を入力しても手続きが進みません。確認していただけますか。",
         ("004512",), True),  # Japanese
    Case("adult_guardianship_registration_number",
         "母の成年後見の登記番号は第2024-1873号です。口座の届出内容の変更をお願いしたいのですが。",
         ("2024-1873",), True),  # Japanese
    # ---------------------------------------------------------------- Korean (2)
    Case("personal_customs_clearance_code",
         "해외직구 주문할 때 개인통관고유부호 P180012345678을 입력했는데 계속 오류가 나요.",
         ("P180012345678",), True),  # Korean
    Case("car_rental_agreement_number",
         "렌터카를 반납했는데 보증금이 아직 환불되지 않았습니다. 제 렌트 계약번호는 RA-230915-0481입니다.",
         ("RA-230915-0481",), True),  # Korean
    # ---------------------------------------------------------------- Indonesian (2)
    Case("hajj_portion_number",
         "Saya mau tanya jadwal keberangkatan haji, nomor porsi saya 3000123456, apakah paketnya sudah "
         "dikonfirmasi?",
         ("3000123456",), True),  # Indonesian
    Case("divorce_certificate_number",
         "Untuk mengubah status pernikahan di data saya, terlampir akta cerai nomor 0123/AC/2023/PA.JS, "
         "mohon diproses.",
         ("0123/AC/2023/PA.JS",), True),  # Indonesian
    # ---------------------------------------------------------------- Turkish (2)
    Case("hes_code",
         "Online check-in yaparken HES kodum T7K4-8821-19 geçersiz görünüyor, yardımcı olur musunuz?",
         ("T7K4-8821-19",), True),  # Turkish
    Case("jobseeker_registration_number",
         "Kurs başvurusu için İŞKUR kayıt numaramı (2024-34-118265) girmem gerekiyor ama sisteminiz kabul "
         "etmiyor.",
         ("2024-34-118265",), True),  # Turkish
    # ---------------------------------------------------------------- Vietnamese (2)
    Case("securities_trading_account_number",
         "Tôi không đăng nhập được ứng dụng giao dịch, số tài khoản chứng khoán của tôi là 058C112233.",
         ("058C112233",), True),  # Vietnamese
    Case("pawn_ticket_number",
         "Tôi muốn chuộc lại chiếc điện thoại, số biên nhận cầm đồ là CD-0912/24, cửa hàng mở cửa đến mấy giờ?",
         ("CD-0912/24",), True),  # Vietnamese
    # ---------------------------------------------------------------- Nigerian Pidgin (2)
    Case("cable_tv_smartcard_number",
         "Abeg my DStv no dey show since yesterday, I don pay but smartcard number 7024118392 still dey "
         "show say e don expire.",
         ("7024118392",), True),  # Nigerian Pidgin
    Case("nysc_state_code",
         "I don upload my call-up letter but una app no gree accept my NYSC state code LA/23B/4471, wetin "
         "I go do?",
         ("LA/23B/4471",), True),  # Nigerian Pidgin
    # ---------------------------------------------------------------- Bengali (1)
    Case("savings_certificate_number",
         "আমার সঞ্চয়পত্রের নম্বর PSS-0048172 দিয়ে খুঁজলে মুনাফার স্টেটমেন্ট পাওয়া যাচ্ছে না, দয়া করে দেখুন।",
         ("PSS-0048172",), True),  # Bengali
    # ---------------------------------------------------------------- Urdu (1)
    Case("domicile_certificate_number",
         "میرے ڈومیسائل سرٹیفکیٹ نمبر D-118276/2022 کی تصدیق نہیں ہو رہی، براہ کرم اپنا سسٹم چیک کریں۔",
         ("D-118276/2022",), True),  # Urdu
    # ---------------------------------------------------------------- Marathi (1)
    Case("caste_certificate_number",
         "माझ्या जात प्रमाणपत्राचा क्रमांक २०२३/जाप्र/४५८१ असूनही अर्जात तो स्वीकारला जात नाही, कृपया मदत करा.",
         ("२०२३/जाप्र/४५८१",), True),  # Marathi
    # ---------------------------------------------------------------- Telugu (1)
    Case("chit_fund_ticket_number",
         "నా చిట్ టికెట్ నంబర్ MKL-50/23-14 కి ఈ నెల వాయిదా కట్టాను, కానీ రసీదు ఇంకా రాలేదు.",
         ("MKL-50/23-14",), True),  # Telugu
    # ---------------------------------------------------------------- Tamil (1)
    Case("gold_loan_account_number",
         "என் நகைக்கடன் கணக்கு எண் GL/2024/004517 க்கு வட்டி எவ்வளவு பாக்கி உள்ளது என்று சொல்லுங்கள்.",
         ("GL/2024/004517",), True),  # Tamil
    # ---------------------------------------------------------------- Cantonese (1)
    Case("betting_account_number",
         "我個投注戶口號碼係77432019，由琴日開始登入唔到，可唔可以幫我睇下？",
         ("77432019",), True),  # Cantonese
    # ---------------------------------------------------------------- Italian (1)
    Case("consular_registration_number",
         "Mi sono trasferito all'estero: il mio numero di iscrizione AIRE è 2019/RM/004817, potete "
         "aggiornare il mio profilo?",
         ("2019/RM/004817",), True),  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    Case("owners_association_account_number",
         "De servicekosten worden dubbel afgeschreven; mijn eigenaarsnummer bij de VvE is VVE-118-0432.",
         ("VVE-118-0432",), True),  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    Case("enforcement_proceedings_number",
         "Komornik zajął mi konto, sygnatura sprawy egzekucyjnej to KM 1534/24 – czy mogą Państwo wstrzymać "
         "kolejne obciążenia?",
         ("KM 1534/24",), True),  # Polish
    # ---------------------------------------------------------------- Ukrainian (1)
    Case("death_certificate_number",
         "Прошу закрити рахунок мого батька, серія та номер свідоцтва про смерть: І-БК 482917.",
         ("І-БК 482917",), True),  # Ukrainian
    # ---------------------------------------------------------------- Thai (1)
    Case("hire_purchase_contract_number",
         "ผมต้องการปิดยอดก่อนกำหนด สัญญาเช่าซื้อรถเลขที่ 6504-1178-220 ต้องชำระเท่าไหร่ครับ",
         ("6504-1178-220",), True),  # Thai
    # ---------------------------------------------------------------- Swahili (1)
    Case("police_clearance_certificate_number",
         "Nimeambatisha cheti cha mwenendo mwema nambari PCC-2024-118837 kwa ajili ya maombi yangu ya kazi "
         "ya udereva.",
         ("PCC-2024-118837",), True),  # Swahili
]


BUSINESS6: list[str] = [
    # ---------------------------------------------------------------- English (15)
    "I placed order no. 48213 on 3 March and the confirmation shows the wrong quantity (2 instead of 3).",  # English
    "My ticket #A-22817 was closed without a reply; error E-1043 still appears when I open the app on "
    "version 5.12.1.",  # English
    "The model XR-500 blender I bought arrived with a cracked jug, part number JG-500-07, can you ship a "
    "replacement?",  # English
    "Invoice INV-2024-00917 charges me €149.99 but the promo code SPRING15 should have taken 15% off.",  # English
    "Tracking number 1Z 999 AA1 01 2345 6784 hasn't updated since it left the depot on 14/05.",  # English
    "After installing firmware build 3.4.118-rc2 my router (model AX-3000) drops Wi-Fi every 20 minutes.",  # English
    "I stayed in room 1214 from 2 to 5 June and was charged twice for the minibar, $38.50 each time.",  # English
    "Flight BA 2490 on 12 August was delayed by 4 hours, so I'd like to claim compensation under EU261.",  # English
    "The manual says on page 37 to hold the reset button for 10 seconds, but on SKU 88-4410-BLK nothing "
    "happens.",  # English
    "Your store no. 312 told me batch LOT 23K0419 of the baby formula was recalled, is that right?",  # English
    "I ordered 6 units of item 204-118 at $12.40 each, but only 4 arrived in package 2 of 3.",  # English
    "The app crashes with code 0x80070005 on Windows 11 build 22631 whenever I try to export a PDF.",  # English
    "Can you check case 00418832? I reported the faulty charger (model PWR-65W-C) over two weeks ago.",  # English
    "The coupon WELCOME-10 expired on 31 December, yet the checkout page still shows 10% off.",  # English
    "My return RMA-77312 for the 27-inch monitor reached your warehouse on 9 April, but there's no refund "
    "yet.",  # English
    # ---------------------------------------------------------------- Spanish (3)
    "Hice el pedido n.º 50317 el 2 de mayo y todavía figura como «en preparación»; pagué 89,90 €.",  # Spanish
    "La factura F-2024/1182 incluye dos veces el artículo REF 33-908, ¿podrían emitir una rectificativa?",  # Spanish
    "Mi lavadora modelo WM-8420 muestra el error E21 desde la actualización 2.3.0.",  # Spanish
    # ---------------------------------------------------------------- French (3)
    "J'ai reçu le colis 6A12345678901 mais il manque l'article réf. 4471-B indiqué sur le bon de "
    "livraison.",  # French
    "Le ticket n° SAV-40921 est toujours ouvert alors que la pièce (code 77-0215) a été posée le "
    "18 mars.",  # French
    "Votre code promo NOEL20 ne fonctionne pas sur ma commande 2024-118734 d'un montant de 64,00 €.",  # French
    # ---------------------------------------------------------------- German (3)
    "Meine Bestellung Nr. 302-5518814-2291 liegt laut Sendungsverfolgung seit dem 4. Juni im "
    "Paketzentrum 21.",  # German
    "Die Kaffeemaschine Modell CM-7 zeigt seit dem Firmware-Update 1.8.2 den Fehler F07 an.",  # German
    "Auf Rechnung RE-77814 stehen 249,00 € inkl. 19 % MwSt., laut Angebot 2024-0316 waren es aber "
    "229,00 €.",  # German
    # ---------------------------------------------------------------- Portuguese (3)
    "Meu pedido nº 7781-23 chegou faltando 2 unidades do produto SKU TNS-4412.",  # Portuguese
    "O chamado #BR-20931 foi encerrado, mas o notebook modelo NX-15 ainda dá erro 0xC000021A na versão "
    "22H2.",  # Portuguese
    "A nota fiscal 000.118.442 saiu com o valor de R$ 1.299,00, mas no site o preço era R$ 1.199,00.",  # Portuguese
    # ---------------------------------------------------------------- Russian (3)
    "Заказ № 9918-4402 оплачен 12 марта, но статус до сих пор «ожидает оплаты».",  # Russian
    "Пылесос модели VC-2210 после обновления прошивки 4.0.7 выдаёт ошибку E05, обращение № 558301.",  # Russian
    "В накладной 77-1209 указано 12 коробок, а пришло 10; партия № 2403-17.",  # Russian
    # ---------------------------------------------------------------- Mandarin Chinese (2)
    "我的订单号2024051288317显示已签收，但我没有收到，快递单号SF1402331187265。",  # Mandarin Chinese
    "型号为K-320的空气净化器出现E3故障码，固件版本V2.1.5，请问如何处理？",  # Mandarin Chinese
    # ---------------------------------------------------------------- Hindi (2)
    "मेरा ऑर्डर नंबर OD1204587731 है, ₹1,499 का रिफंड अभी तक नहीं आया।",  # Hindi
    "मॉडल AC-18T के एसी में E4 एरर आ रहा है, शिकायत संख्या 45-0921 पर अभी तक कोई तकनीशियन नहीं आया।",  # Hindi
    # ---------------------------------------------------------------- Arabic (2)
    "طلبي رقم 558201 وصل ناقصاً قطعتين من المنتج SKU AR-3302، أرجو إرسالهما.",  # Arabic
    "ظهر الخطأ 0x0040 بعد تحديث التطبيق إلى الإصدار 7.4.2، ورقم التذكرة هو TCK-88120.",  # Arabic
    # ---------------------------------------------------------------- Japanese (2)
    "注文番号 249-7781023-1150 の商品（型番 KX-220）がまだ届いていません。",  # Japanese
    "ファームウェア 3.02 に更新後、エラーコード U-61 が表示されます。問い合わせ番号は 20240611-0347 です。",  # Japanese
    # ---------------------------------------------------------------- Korean (2)
    "주문번호 20240512-0003318 상품이 아직 배송 준비 중으로 나와요. 송장번호는 6842-1157-3390입니다.",  # Korean
    "모델명 SW-900 세탁기에서 4E 에러가 계속 떠요. 소프트웨어 버전은 1.3.7입니다.",  # Korean
    # ---------------------------------------------------------------- Indonesian (2)
    "Pesanan saya nomor INV/20240512/MPL/3918827 belum dikirim padahal sudah dibayar Rp 245.000.",  # Indonesian
    "Printer model L3210 menampilkan kode error 031006 setelah saya ganti tinta batch 2311A.",  # Indonesian
    # ---------------------------------------------------------------- Turkish (2)
    "1458823 numaralı siparişimde 3 adet yerine 2 adet ürün geldi, ürün kodu TR-5520.",  # Turkish
    "Destek talebim #TK-40218 hâlâ yanıtlanmadı; cihaz modeli RX-12, yazılım sürümü 2.0.14.",  # Turkish
    # ---------------------------------------------------------------- Vietnamese (2)
    "Đơn hàng số 240518QX7K21 của tôi bị giao thiếu 1 sản phẩm mã SP-0921.",  # Vietnamese
    "Máy lọc nước model RO-9 báo lỗi E2 sau khi tôi thay lõi lọc lô số 2024-03B, mã hỗ trợ HT-118.",  # Vietnamese
    # ---------------------------------------------------------------- Nigerian Pidgin (2)
    "Abeg, my order number 1029384 wey I pay ₦18,500 for never reach, e don pass 7 days.",  # Nigerian Pidgin
    "The TV model 43-UQ7 wey I buy for una store 14 dey show error code 102 since I update am to "
    "version 5.1.",  # Nigerian Pidgin
    # ---------------------------------------------------------------- Bengali (1)
    "আমার অর্ডার নম্বর ৪৪৭১২০ এর পণ্যটি (মডেল BX-220) ভাঙা অবস্থায় এসেছে।",  # Bengali
    # ---------------------------------------------------------------- Urdu (1)
    "میرا آرڈر نمبر 88213 ابھی تک نہیں پہنچا، ٹریکنگ نمبر LP-7741029 پر کوئی اپ ڈیٹ نہیں۔",  # Urdu
    # ---------------------------------------------------------------- Marathi (1)
    "मी ऑर्डर क्रमांक ७७२१४ साठी ₹२,४९९ भरले पण पावती क्रमांक INV-3310 मध्ये चुकीची रक्कम आहे.",  # Marathi
    # ---------------------------------------------------------------- Telugu (1)
    "నా ఆర్డర్ నంబర్ 66120 లో మోడల్ TV-32H రిమోట్ రాలేదు, టికెట్ నంబర్ 9087.",  # Telugu
    # ---------------------------------------------------------------- Tamil (1)
    "ஆர்டர் எண் 55019 இல் வந்த மிக்ஸி மாடல் MX-750 எரர் கோடு E1 காட்டுகிறது.",  # Tamil
    # ---------------------------------------------------------------- Cantonese (1)
    "我張訂單編號 HK-230981 嘅貨仲未到，明明話咗三日內送到㗎。",  # Cantonese
    # ---------------------------------------------------------------- Italian (1)
    "L'ordine n. 120-448 è arrivato senza il cavo, codice articolo CV-2M; ho aperto il ticket 7731 il "
    "5 aprile.",  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    "Mijn bestelling 2024-88431 is al tien dagen onderweg en bij verzendnummer 3SABCD1234567 staat niets.",  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    "Zamówienie nr 774/05/2024 dotarło, ale ekspres model OP-330 pokazuje błąd E9, którego nie ma w "
    "instrukcji na str. 14.",  # Polish
    # ---------------------------------------------------------------- Ukrainian (1)
    "Моє замовлення № 33871 досі не відправлене, хоча оплату 1 250 грн я зробив 3 травня.",  # Ukrainian
    # ---------------------------------------------------------------- Thai (1)
    "ผมสั่งซื้อคำสั่งซื้อเลขที่ TH-558213 แต่ได้รับพัดลมรุ่น FN-16 ผิดสีครับ",  # Thai
    # ---------------------------------------------------------------- Swahili (1)
    "Nimepokea oda namba 40917 lakini bidhaa SKU KE-1180 haipo; tiketi yangu ni #SW-3321.",  # Swahili
]
