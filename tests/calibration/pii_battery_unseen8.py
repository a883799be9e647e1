"""Unseen PII battery no. 8 for the multilingual support-log PII scrubber.

Written 2026-12-06 without seeing the detectors, their patterns, or any other battery's sentences
(only the earlier batteries' kind names were read, to avoid reusing them).

UNSEEN8 holds 60 customer-support sentences (chat or e-mail messages a customer writes to a company),
each carrying exactly one personal identifier of a long-tail kind not used in earlier batteries
(trade and safety cards, permits and licences, diaspora and immigrant documents, benefit, voucher and
welfare-fund numbers, housing and property files, government and land-restitution references, farm,
vineyard and animal identifiers, vehicle and device identifiers, accounts and handles on specific
platforms, apps, games and exchanges), always with a cue word or phrase (before or after the value,
possessive, compound, inflected or abbreviated, in the sentence's own script, sometimes a Latin
acronym such as "UID" glued to text in a script without spaces). Values come in many shapes: digits
only, letters and digits, with slashes, dots, colons, hyphens, underscores or spaces inside, in
native digits (Arabic-Indic, Persian, Bengali, Devanagari, Thai), or right before a particle or
punctuation. Every listed value must be gone after scrubbing.

BUSINESS8 holds 60 first-person support sentences in the same mix of languages that contain only
non-personal business identifiers and numbers (orders, invoices, receipts, tracking and waybill
numbers, tickets, complaint, inquiry and case numbers of the company, SKUs, models, part numbers,
batches and lots, error codes, firmware and app versions, builds, prices, dates, quantities, flights,
rooms, promo codes, store numbers), often with the same number words and shapes as the personal ones.
They must come out of the scrubber unchanged.

All values are invented. The language of each entry is noted in a trailing comment.
"""

from calibration.pii_batteries import Case

UNSEEN8: list[Case] = [
    # ---------------------------------------------------------------- English (12)
    Case("nintendo_friend_code",
         "My son's Switch was replaced under warranty and now his friend list is empty; his friend code "
         "is SW-4821-7730-9156, can you restore it?",
         ("SW-4821-7730-9156",), True),  # English
    Case("imei_number",
         "Please block my stolen handset straight away, the IMEI printed on the box is 358240051137926.",
         ("358240051137926",), True),  # English
    Case("construction_skills_card_number",
         "Your site induction app keeps rejecting my CSCS card number 09127743 even though the card is "
         "valid until 2028.",
         ("09127743",), True),  # English
    Case("security_industry_licence_number",
         "I'm the door supervisor you booked for Saturday; my SIA licence no. 1013 4482 9071 5536 is on "
         "the badge if the venue asks.",
         ("1013 4482 9071 5536",), True),  # English
    Case("github_username",
         "The sponsorship payout never arrived, could you check it was linked to my GitHub handle "
         "quill-otter_92?",
         ("quill-otter_92",), True),  # English
    Case("strava_athlete_id",
         "The club challenge leaderboard doesn't show any of my runs; my Strava athlete ID is 48812937, "
         "if that helps.",
         ("48812937",), True),  # English
    Case("marina_berth_licence_number",
         "The invoice for the winter lift-out should go against my berth licence PB/C-114/2026, not my "
         "neighbour's.",
         ("PB/C-114/2026",), True),  # English
    Case("foster_carer_approval_number",
         "The form for the extra car seat asks for proof, so here is my foster carer approval number "
         "FCA.0392.77 from the county.",
         ("FCA.0392.77",), True),  # English
    Case("mobility_aid_loan_number",
         "The left brake on the powerchair the wheelchair service lent me has failed; the loan number on "
         "the sticker is WS-77-40215.",
         ("WS-77-40215",), True),  # English
    Case("home_energy_grant_application_number",
         "Your installer says the heat pump can't be fitted until my grant application reference "
         "BUS 2291 0457 is approved, any news?",
         ("BUS 2291 0457",), True),  # English
    Case("gender_recognition_certificate_number",
         "Please update the title on my account; I can show my Gender Recognition Certificate, number "
         "GRC/0055/1187, if needed.",
         ("GRC/0055/1187",), True),  # English
    Case("apprenticeship_agreement_number",
         "The training provider portal asks for my apprenticeship agreement number, which is "
         "20260314-AP-5521, but won't accept it.",
         ("20260314-AP-5521",), True),  # English
    # ---------------------------------------------------------------- Spanish (2)
    Case("livestock_holding_code",
         "El pienso se entregó en otra granja; el código REGA de mi explotación es ES370450000129, "
         "compruébenlo por favor.",
         ("ES370450000129",), True),  # Spanish
    Case("press_card_number",
         "Para la acreditación del concierto les envío mi carné de prensa nº FAPE-18827, que vence en "
         "junio.",
         ("FAPE-18827",), True),  # Spanish
    # ---------------------------------------------------------------- Portuguese (2)
    Case("work_record_booklet_number",
         "O aplicativo de vocês pede a minha carteira de trabalho: o número é 4471203 e a série é 0031, "
         "mas dá erro.",
         ("4471203",), True),  # Portuguese (Brazil)
    Case("land_registry_certificate_access_code",
         "Para a escritura precisam do código de acesso da certidão permanente do meu apartamento: "
         "PP-2931-04417-110407-000882.",
         ("PP-2931-04417-110407-000882",), True),  # Portuguese (Portugal)
    # ---------------------------------------------------------------- French (2)
    Case("vineyard_registry_number",
         "Votre logiciel de déclaration de récolte refuse mon numéro CVI 33A0412778, alors que c'est bien "
         "celui de mon exploitation.",
         ("33A0412778",), True),  # French
    Case("energy_voucher_number",
         "Je voudrais régler ma facture de gaz avec mon chèque énergie n° 2026 1148 9930 7, mais le site "
         "le dit déjà utilisé.",
         ("2026 1148 9930 7",), True),  # French
    # ---------------------------------------------------------------- German (2)
    Case("rail_discount_card_number",
         "Beim Buchen wird meine BahnCard-Nummer 7081 4110 2290 3357 nicht akzeptiert, obwohl die Karte "
         "bis März gilt.",
         ("7081 4110 2290 3357",), True),  # German
    Case("education_voucher_number",
         "Das Jobcenter hat mir für Ihren Schweißkurs einen Bildungsgutschein (Nr. 961D-2026-04471) "
         "ausgestellt; wie reiche ich ihn ein?",
         ("961D-2026-04471",), True),  # German
    # ---------------------------------------------------------------- Italian (2)
    Case("heating_system_register_code",
         "Il tecnico deve inserire nel libretto il codice catasto impianto della mia caldaia, "
         "R7F2-0091-3345: potete verificarlo?",
         ("R7F2-0091-3345",), True),  # Italian
    Case("sports_medical_fitness_certificate_number",
         "Per iscrivermi alla granfondo mi chiedete il certificato medico agonistico: il mio è il "
         "n. 2026/CMA/00814.",
         ("2026/CMA/00814",), True),  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    Case("personal_care_budget_number",
         "De factuur van het zorgbureau moet naar de SVB met mijn pgb-budgetnummer 5501772-03, niet naar "
         "mijn huisadres.",
         ("5501772-03",), True),  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    Case("pole_card_number",
         "Przy rejestracji na kurs system odrzuca numer mojej Karty Polaka KP/BY/004417/2019, proszę o "
         "pomoc.",
         ("KP/BY/004417/2019",), True),  # Polish
    # ---------------------------------------------------------------- Russian (2)
    Case("shared_construction_agreement_number",
         "Ключи от квартиры до сих пор не выдали, хотя по моему договору долевого участия "
         "№ ЖК-СП/2-117/2024 срок истёк в октябре.",
         ("ЖК-СП/2-117/2024",), True),  # Russian
    Case("housing_subsidy_certificate_number",
         "Банк не принимает моё свидетельство молодой семьи на соцвыплату за жильё, серия и номер "
         "МС 0047812, подскажите почему.",
         ("МС 0047812",), True),  # Russian
    # ---------------------------------------------------------------- Ukrainian (1)
    Case("housing_damage_compensation_claim_number",
         "Прошу прискорити зарахування коштів: номер моєї заяви на єВідновлення ЗВ-2025-0119-4471.",
         ("ЗВ-2025-0119-4471",), True),  # Ukrainian
    # ---------------------------------------------------------------- Turkish (1)
    Case("former_citizen_blue_card_number",
         "Bankanızda hesap açarken Mavi Kart numaram 99120447118'i sisteme giremiyorum, yardımcı olur "
         "musunuz?",
         ("99120447118",), True),  # Turkish
    # ---------------------------------------------------------------- Arabic (2)
    Case("umrah_permit_number",
         "تم إلغاء حجز الفندق رغم أن تصريح العمرة الخاص بي رقم ٤٤٨٢٠١٧٣٥ ما زال ساريًا، أرجو إعادة "
         "الحجز.",
         ("٤٤٨٢٠١٧٣٥",), True),  # Arabic
    Case("border_entry_number",
         "لا أستطيع تفعيل شريحة الجوال لأن النظام لا يقبل رقم الحدود الخاص بي 3012447819، ما الحل؟",
         ("3012447819",), True),  # Arabic
    # ---------------------------------------------------------------- Persian (1)
    Case("marriage_loan_file_number",
         "قسط اول را پرداخت کردم ولی در سامانه، پرونده وام ازدواج من به شماره ۱۴۰۳-۷۷۸۱۲ هنوز بدهکار "
         "نشان داده می‌شود.",
         ("۱۴۰۳-۷۷۸۱۲",), True),  # Persian
    # ---------------------------------------------------------------- Urdu (1)
    Case("housing_society_plot_file_number",
         "میری پلاٹ فائل نمبر DHA-LHR-P-44817 کی قسط آپ کے بینک سے دو بار کٹ گئی ہے، براہ کرم واپس "
         "کریں۔",
         ("DHA-LHR-P-44817",), True),  # Urdu
    # ---------------------------------------------------------------- Hindi (2)
    Case("sukanya_samriddhi_account_number",
         "मेरी बेटी के सुकन्या समृद्धि खाता संख्या ३३७१०२४४१८ में इस महीने की किस्त जमा नहीं हुई है।",
         ("३३७१०२४४१८",), True),  # Hindi
    Case("rti_application_registration_number",
         "मैंने आपके विभाग में आरटीआई आवेदन किया था, उसका पंजीकरण नंबर DOPAT/R/2026/60417 है, पर अब तक "
         "जवाब नहीं आया।",
         ("DOPAT/R/2026/60417",), True),  # Hindi
    # ---------------------------------------------------------------- Bengali (1)
    Case("heirship_certificate_number",
         "বাবার অ্যাকাউন্ট আমার নামে নিতে ওয়ারিশ সনদ নং ০৭/২০২৬-১৪৪ জমা দিয়েছি, কিন্তু এখনো কোনো "
         "উত্তর পাইনি।",
         ("০৭/২০২৬-১৪৪",), True),  # Bengali
    # ---------------------------------------------------------------- Marathi (1)
    Case("housing_society_share_certificate_number",
         "गृहकर्जासाठी माझ्या सदनिकेचे भागप्रमाणपत्र क्रमांक SC-0412/118 बँकेला पाठवले आहे, कृपया ते "
         "तपासून घ्या.",
         ("SC-0412/118",), True),  # Marathi
    # ---------------------------------------------------------------- Tamil (1)
    Case("youtube_channel_handle",
         "என் யூடியூப் சேனல் @chennai_samayal_77-க்கு வர வேண்டிய விளம்பர வருமானம் இரண்டு மாதமாக "
         "வரவில்லை.",
         ("@chennai_samayal_77",), True),  # Tamil
    # ---------------------------------------------------------------- Telugu (1)
    Case("vehicle_engine_number",
         "నా ట్రాక్టర్ ఇంజిన్ నంబర్ S325.1G88014 ను బీమా పాలసీలో తప్పుగా రాశారు, దయచేసి సరిచేయండి.",
         ("S325.1G88014",), True),  # Telugu
    # ---------------------------------------------------------------- Kannada (1)
    Case("device_mac_address",
         "ನನ್ನ ಸ್ಮಾರ್ಟ್‌ವಾಚ್‌ನ MAC ವಿಳಾಸ 3C:7A:8A:19:F4:02 ಆಗಿದೆ, ಅದು ನಿಮ್ಮ ರೂಟರ್‌ಗೆ ಸಂಪರ್ಕವಾಗುತ್ತಿಲ್ಲ.",
         ("3C:7A:8A:19:F4:02",), True),  # Kannada
    # ---------------------------------------------------------------- Malayalam (1)
    Case("elephant_ownership_certificate_number",
         "ഞങ്ങളുടെ ആനയുടെ ഉടമസ്ഥാവകാശ സർട്ടിഫിക്കറ്റ് നമ്പർ KFD/TSR/0219 ആണ്; ഉത്സവ ഇൻഷുറൻസ് "
         "പുതുക്കാൻ ഇത് മതിയോ?",
         ("KFD/TSR/0219",), True),  # Malayalam
    # ---------------------------------------------------------------- Punjabi (1)
    Case("language_test_report_form_number",
         "ਮੇਰਾ IELTS ਟੈਸਟ ਰਿਪੋਰਟ ਫਾਰਮ ਨੰਬਰ 25IN004417SING012A ਤੁਹਾਡੀ ਵੈੱਬਸਾਈਟ ਤੇ ਗਲਤ ਦਿਖਾਈ ਦੇ ਰਿਹਾ ਹੈ।",
         ("25IN004417SING012A",), True),  # Punjabi
    # ---------------------------------------------------------------- Japanese (2)
    Case("employment_insurance_number",
         "転職先の手続きで、前職の雇用保険被保険者番号5012-774183-9が必要と言われたのですが、"
         "そちらで確認できますか。",
         ("5012-774183-9",), True),  # Japanese
    Case("maternal_child_health_handbook_number",
         "母子健康手帳の交付番号 R8-01147 を入力しても、育児アプリに登録できません。",
         ("R8-01147",), True),  # Japanese
    # ---------------------------------------------------------------- Korean (2)
    Case("housing_subscription_account_number",
         "제 주택청약종합저축 계좌번호 110-482-771903이 조회되지 않아 청약 신청을 못 하고 있어요.",
         ("110-482-771903",), True),  # Korean
    Case("naver_account_id",
         "네이버 아이디 sunny_mk92로 결제했는데 포인트가 적립되지 않았습니다.",
         ("sunny_mk92",), True),  # Korean
    # ---------------------------------------------------------------- Chinese (2)
    Case("crypto_exchange_uid",
         "我的交易所账户UID58813307提现一直卡在审核中，麻烦尽快处理。",
         ("58813307",), True),  # Chinese (simplified)
    Case("citizen_digital_certificate_number",
         "報稅時系統說我的自然人憑證卡號TP03912774018852無效，請問要怎麼處理？",
         ("TP03912774018852",), True),  # Chinese (traditional)
    # ---------------------------------------------------------------- Vietnamese (1)
    Case("tiktok_handle",
         "Tài khoản TikTok @linh.banhmi_89 của tôi bị khóa nhầm, mong bộ phận hỗ trợ xem lại giúp.",
         ("@linh.banhmi_89",), True),  # Vietnamese
    # ---------------------------------------------------------------- Thai (1)
    Case("monk_ordination_certificate_number",
         "อาตมาต้องการเปิดซิมใหม่ ใช้ใบสุทธิพระเลขที่ ๐๔๗๑/๒๕๖๘ ยืนยันตัวตนแทนบัตรได้หรือไม่",
         ("๐๔๗๑/๒๕๖๘",), True),  # Thai
    # ---------------------------------------------------------------- Indonesian (1)
    Case("prakerja_card_number",
         "Saldo pelatihan di kartu Prakerja saya nomor 5120447719830026 belum masuk ke akun di platform "
         "Anda.",
         ("5120447719830026",), True),  # Indonesian
    # ---------------------------------------------------------------- Malay (1)
    Case("mobile_legends_player_id",
         "Diamond yang saya beli tidak masuk ke akaun Mobile Legends saya, ID pemain 88120334 (2105).",
         ("88120334 (2105)",), True),  # Malay
    # ---------------------------------------------------------------- Swahili (1)
    Case("tea_grower_number",
         "Malipo ya bonasi ya chai bado hayajaingia; namba yangu ya mkulima wa chai ni NY/0441/7-B.",
         ("NY/0441/7-B",), True),  # Swahili
    # ---------------------------------------------------------------- Greek (1)
    Case("street_market_vendor_permit_number",
         "Η άδεια πωλητή λαϊκής αγοράς μου, με αριθμό ΑΠ-7781/24, πρέπει να αναγράφεται στις αποδείξεις "
         "του POS.",
         ("ΑΠ-7781/24",), True),  # Greek
    # ---------------------------------------------------------------- Czech (1)
    Case("sipo_connection_number",
         "Platby za elektřinu chci převést na SIPO, moje spojovací číslo SIPO je 4471203381.",
         ("4471203381",), True),  # Czech
    # ---------------------------------------------------------------- Romanian (1)
    Case("land_restitution_claim_file_number",
         "Pentru asigurarea terenului vă trimit numărul dosarului meu de retrocedare, 1127/R/2004, emis "
         "de comisia județeană.",
         ("1127/R/2004",), True),  # Romanian
    # ---------------------------------------------------------------- Hungarian (1)
    Case("primary_producer_card_number",
         "A felvásárlási szerződéshez kérik az őstermelői igazolványom számát, ŐT-1104-77213, de az "
         "űrlap nem fogadja el.",
         ("ŐT-1104-77213",), True),  # Hungarian
    # ---------------------------------------------------------------- Swedish (1)
    Case("paratransit_permit_number",
         "Taxin vägrade köra mig i går fast jag har färdtjänsttillstånd nr 0180-44712; kan ni prata "
         "med föraren?",
         ("0180-44712",), True),  # Swedish
    # ---------------------------------------------------------------- Finnish (1)
    Case("hot_work_card_number",
         "Työmaan kulkujärjestelmä ei tunnista tulityökorttini numeroa TT-2026-118840, vaikka kortti on "
         "voimassa.",
         ("TT-2026-118840",), True),  # Finnish
    # ---------------------------------------------------------------- Hebrew (1)
    Case("immigrant_certificate_number",
         "כדי לקבל את הנחת העולים במנוי אני שולחת את מספר תעודת העולה שלי: 7734019.",
         ("7734019",), True),  # Hebrew
    # ---------------------------------------------------------------- Tagalog (1)
    Case("owwa_membership_number",
         "Para sa diskuwento sa padala, ito po ang OWWA membership no. ko: OW-2025-0047712, pakitingnan "
         "po.",
         ("OW-2025-0047712",), True),  # Tagalog
]

BUSINESS8: list[str] = [
    # ---------------------------------------------------------------- English (12)
    "Order #US-448120 arrived with two of the six mugs broken; the box label says batch 23-118B.",  # English
    "Invoice No. INV-2026-00917 charges me for 3 licences, but I only bought 2 at $49.99 each.",  # English
    "The waybill number 7712 0448 1190 in your email has shown 'returned to sender' since 14 November.",  # English
    "Since updating to firmware 4.18.2 (build 7731) the thermostat shows error code E-204 every night.",  # English
    "Ticket #558120 was closed without a reply, and the dishwasher model DW-6000X still leaks from the "
    "door.",  # English
    "Could you check stock of part number 61-2290-77 at store No. 0418? The website says 12 units.",  # English
    "Promo code WINTER25 didn't apply to order 20261204-3381, so I paid £89.00 instead of £66.75.",  # English
    "Our flight BA 2771 on 3 December was delayed five hours and the meal voucher from gate B32 was "
    "refused.",  # English
    "Room 1418 still has the broken air conditioning that complaint ref. CR-2026-0412 was about.",  # English
    "Receipt No. 0042-118-7731 lists SKU 440-1187 twice; please refund the duplicate £12.50.",  # English
    "Is lot L2611-05 of the baby formula affected by the recall too, or only lot L2611-04?",  # English
    "App version 3.9.0 (build 2026.11.30) crashes whenever I open case ID 00481127 in your help centre.",  # English
    # ---------------------------------------------------------------- Spanish (2)
    "El pedido nº 4471-2026 llegó sin el cargador del modelo XR-220; el albarán es el ALB/0918/26.",  # Spanish
    "Mi vuelo IB3172 del 12/12 se canceló y la incidencia número INC-77120 sigue abierta sin el "
    "reembolso de 189,50 €.",  # Spanish
    # ---------------------------------------------------------------- Portuguese (2)
    "O pedido nº 8812-0339 chegou com o produto errado: pedi o SKU 110-4471 e veio o 110-4472.",  # Portuguese
    "A nota fiscal nº 000.118.447 cobra R$ 349,90, mas o preço anunciado do modelo TV-43F era "
    "R$ 299,90.",  # Portuguese
    # ---------------------------------------------------------------- French (2)
    "Ma commande n° FR-2026-55812 est bloquée depuis le 3 décembre et le numéro de suivi 6A11874409231 "
    "ne bouge plus.",  # French
    "Le lave-linge modèle LL-7400 affiche le code erreur E21 ; le ticket SAV n° 44812 n'a toujours pas "
    "de réponse.",  # French
    # ---------------------------------------------------------------- German (2)
    "Meine Bestellung Nr. 302-4471129-88 kam ohne Netzteil an, Artikelnummer 7781-220, Charge 24/0918.",  # German
    "Die Rechnung Nr. RE-2026-11874 enthält den Router FRX-7590 zweimal zu je 219,00 €, bitte "
    "korrigieren.",  # German
    # ---------------------------------------------------------------- Italian (2)
    "L'ordine n. IT-88120 è arrivato senza viti; il codice articolo è 4410-BK e il lotto 2611.",  # Italian
    "La pratica di reclamo n. 2026/7712 è ferma da un mese e la caldaia modello K-24 segna ancora "
    "l'errore E04.",  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    "Mijn bestelling nr. 7712-4480 is nog niet geleverd en de track-and-trace code 3SABC1234567 werkt "
    "niet.",  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    "Zamówienie nr 2026/12/04471 przyszło bez instrukcji, a faktura nr FV 118/12/2026 ma złą kwotę.",  # Polish
    # ---------------------------------------------------------------- Russian (2)
    "Заказ № 44812-0918 пришёл без пульта: модель телевизора TV-55Q7, артикул 118-2290.",  # Russian
    "Обращение № 7712049 закрыли, а кофемашина с прошивкой 2.4.1 так и выдаёт ошибку E-17.",  # Russian
    # ---------------------------------------------------------------- Ukrainian (1)
    "Замовлення № 55120447 досі не відправлене, хоча номер ТТН 20450011874412 вже створено.",  # Ukrainian
    # ---------------------------------------------------------------- Turkish (1)
    "2026-11874 numaralı siparişim eksik geldi; ürün kodu KB-440 olan klavye kutuda yoktu.",  # Turkish
    # ---------------------------------------------------------------- Arabic (2)
    "طلبي رقم ٤٤٨١٢٠٧ وصل ناقصًا، ورقم الشحنة SMSA-771204 لا يظهر في صفحة التتبع.",  # Arabic
    "رقم الشكوى 2026-5512 ما زال مفتوحًا، والمكيف موديل AC-18K يعطي رمز الخطأ E6 منذ يومين.",  # Arabic
    # ---------------------------------------------------------------- Persian (1)
    "سفارش شماره ۷۷۱۲۰۴۴ من هنوز ارسال نشده و کد رهگیری مرسوله ۱۱۸۷۴۴۰۹۲۳ هم کار نمی‌کند.",  # Persian
    # ---------------------------------------------------------------- Urdu (1)
    "میرا آرڈر نمبر 44120-PK ابھی تک نہیں پہنچا، اور ٹریکنگ نمبر LE771204PK بھی کام نہیں کر رہا۔",  # Urdu
    # ---------------------------------------------------------------- Hindi (2)
    "मेरा ऑर्डर नंबर OD4471209918 अभी तक नहीं आया, और इनवॉइस नंबर IN-2026-0918 में कीमत गलत है।",  # Hindi
    "शिकायत संख्या ७७१२०४ पर कोई जवाब नहीं मिला, फ्रिज मॉडल RF-260 में अब भी एरर कोड E5 आ रहा है।",  # Hindi
    # ---------------------------------------------------------------- Bengali (1)
    "আমার অর্ডার নম্বর ৪৪৮১২০৯ এখনো পৌঁছায়নি, ট্র্যাকিং নম্বর BD771204 দিয়েও কিছু দেখাচ্ছে না।",  # Bengali
    # ---------------------------------------------------------------- Marathi (1)
    "माझी ऑर्डर क्रमांक ५५१२०४ अजून आली नाही आणि पावती क्रमांक R-2026-118 मध्ये किंमत चुकीची आहे.",  # Marathi
    # ---------------------------------------------------------------- Tamil (1)
    "என் ஆர்டர் எண் 771204-TN இன்னும் வரவில்லை, மிக்சி மாடல் MX-750 க்கான விலைப்பட்டியல் எண் "
    "INV-4481 ஐ அனுப்புங்கள்.",  # Tamil
    # ---------------------------------------------------------------- Telugu (1)
    "నా ఆర్డర్ నంబర్ 44812099 ఇంకా రాలేదు, ట్రాకింగ్ నంబర్ DL7712044IN కూడా పని చేయడం లేదు.",  # Telugu
    # ---------------------------------------------------------------- Kannada (1)
    "ನನ್ನ ಆರ್ಡರ್ ಸಂಖ್ಯೆ 5512047 ಇನ್ನೂ ಬಂದಿಲ್ಲ, ದೂರು ಸಂಖ್ಯೆ CMP-2026-118 ಗೆ ಉತ್ತರವೂ ಬಂದಿಲ್ಲ.",  # Kannada
    # ---------------------------------------------------------------- Malayalam (1)
    "എന്റെ ഓർഡർ നമ്പർ 7712044 ഇതുവരെ കിട്ടിയില്ല, ബാച്ച് നമ്പർ B-2611 ഉള്ള മരുന്ന് മാറ്റി തരുമോ?",  # Malayalam
    # ---------------------------------------------------------------- Punjabi (1)
    "ਮੇਰਾ ਆਰਡਰ ਨੰਬਰ 44120918 ਅਜੇ ਤੱਕ ਨਹੀਂ ਆਇਆ, ਅਤੇ ਬਿੱਲ ਨੰਬਰ PB-2026-771 ਵਿੱਚ ਰਕਮ ਗਲਤ ਹੈ।",  # Punjabi
    # ---------------------------------------------------------------- Japanese (2)
    "注文番号 250-4471209-8812 の商品が届かず、追跡番号 4481-2209-7731 も反映されていません。",  # Japanese
    "型番 RC-7700 の炊飯器でエラーコード H05 が出ます。お問い合わせID は Q-2026-118 です。",  # Japanese
    # ---------------------------------------------------------------- Korean (2)
    "주문번호 2026120455812의 상품이 아직 안 왔고, 송장번호 6071-2204-4481도 조회가 안 돼요.",  # Korean
    "접수번호 AS-771204로 수리 요청한 냉장고(모델 RF-85C)가 또 에러 코드 22E를 띄웁니다.",  # Korean
    # ---------------------------------------------------------------- Chinese (2)
    "我的订单号7712044812099还没发货，发票号码 044120918 的金额也开错了。",  # Chinese (simplified)
    "我的訂單編號 TW-2026-55812 還沒出貨，客服案件編號 771204 也一直沒有回覆。",  # Chinese (traditional)
    # ---------------------------------------------------------------- Vietnamese (1)
    "Đơn hàng số DH-771204 bị giao thiếu, mã vận đơn GHN44812099 không cập nhật từ ngày 2/12.",  # Vietnamese
    # ---------------------------------------------------------------- Thai (1)
    "คำสั่งซื้อหมายเลข 2612044812 ยังไม่ได้รับ และทีวีรุ่น TV-43A ราคาไม่ตรงกับใบเสร็จเลขที่ R-7712 ค่ะ",  # Thai
    # ---------------------------------------------------------------- Indonesian (1)
    "Pesanan nomor 2612044812099 belum sampai, dan kode promo HEMAT50 tidak terpotong di invoice "
    "INV/2026/118.",  # Indonesian
    # ---------------------------------------------------------------- Malay (1)
    "Pesanan saya nombor MY-771204 belum sampai, dan nombor tiket aduan 44812 masih belum dijawab.",  # Malay
    # ---------------------------------------------------------------- Swahili (1)
    "Oda namba 771204 imefika bila chaja, na namba ya tiketi ya malalamiko TK-4481 bado haijajibiwa.",  # Swahili
    # ---------------------------------------------------------------- Greek (1)
    "Στο δωμάτιο 412 του ξενοδοχείου σας το κλιματιστικό μοντέλο AC-900 βγάζει κωδικό σφάλματος E-22 "
    "από τις 3/12.",  # Greek
    # ---------------------------------------------------------------- Czech (1)
    "Objednávka č. 771204-CZ stále nedorazila a číslo zásilky DR4481209918 se nedá sledovat.",  # Czech
    # ---------------------------------------------------------------- Romanian (1)
    "Factura nr. FCT-2026-04471 include de două ori produsul cu codul 118-220, vă rog să o corectați.",  # Romanian
    # ---------------------------------------------------------------- Hungarian (1)
    "A 2026/771204 számú rendelésemből hiányzik a töltő, a termék cikkszáma TK-4481.",  # Hungarian
    # ---------------------------------------------------------------- Swedish (1)
    "Min beställning nr 771204-SE har inte kommit och sändningsnumret 00370712044812 går inte att spåra.",  # Swedish
    # ---------------------------------------------------------------- Finnish (1)
    "Tilaukseni nro 4481209 saapui ilman laturia, ja tukipyynnön numero on TP-771204.",  # Finnish
    # ---------------------------------------------------------------- Hebrew (1)
    "ההזמנה שלי מספר 7712044 עדיין לא הגיעה, ומספר המשלוח RR4481209IL לא מתעדכן.",  # Hebrew
    # ---------------------------------------------------------------- Tagalog (1)
    "Hindi pa dumarating ang order ko na may numerong PH-771204, at ayaw gumana ng promo code PASKO20.",  # Tagalog
]
