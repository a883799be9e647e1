"""Unseen PII battery no. 7 for the multilingual support-log PII scrubber.

Written 2026-12-06 without seeing the detectors, their patterns, or any other battery's sentences
(only the earlier batteries' kind names were read, to avoid reusing them).

UNSEEN7 holds 60 customer-support sentences (chat or e-mail messages a customer writes to a company),
each carrying exactly one personal identifier of a long-tail kind not used in earlier batteries
(memberships, permits, registrations, licences, certificates, benefit cards, animal, vehicle and
property identifiers, platform handles, government references), always with a cue word or phrase
(before or after the value, possessive, compound, inflected or abbreviated, in the sentence's own
script). Values come in many shapes: digits only, letters and digits, with slashes, dots, hyphens or
spaces inside, in native digits (Arabic-Indic, Persian, Devanagari, Gujarati, Thai), or right before
a particle or punctuation. Every listed value must be gone after scrubbing.

BUSINESS7 holds 60 first-person support sentences in the same mix of languages that contain only
non-personal business identifiers and numbers (orders, invoices, tracking and waybill numbers,
tickets, complaint and case numbers of the company, SKUs, models, part numbers, batches and lots,
error codes, firmware and app versions, builds, prices, dates, quantities, flights, rooms, promo
codes, store numbers), often with the same number words and shapes as the personal ones.
They must come out of the scrubber unchanged.

All values are invented. The language of each entry is noted in a trailing comment.
"""

from calibration.pii_batteries import Case

UNSEEN7: list[Case] = [
    # ---------------------------------------------------------------- English (12)
    Case("chess_federation_player_id",
         "I registered for your online blitz tournament but the pairing page can't find me; my FIDE ID "
         "is 2307148, please add it manually.",
         ("2307148",), True),  # English
    Case("food_bank_voucher_code",
         "My GP referred me and my food bank voucher code FBV/22817/K won't scan at your Tuesday "
         "collection point.",
         ("FBV/22817/K",), True),  # English
    Case("council_tax_account_number",
         "Your direct debit form says my council tax account number 6012 8477 31 doesn't match your "
         "records, could you double-check?",
         ("6012 8477 31",), True),  # English
    Case("landlord_licence_number",
         "The letting portal wants my landlord licence no. HMO-LDN-2023-04417 before it will publish "
         "the flat, but I uploaded it last week.",
         ("HMO-LDN-2023-04417",), True),  # English
    Case("aircraft_tail_number",
         "I'd like a hangar quote for my Cessna 172, tail number N4471K, for the winter months.",
         ("N4471K",), True),  # English
    Case("kennel_club_registration_number",
         "Our puppy's Kennel Club registration number is AX09215603 and the insurer asked me to send "
         "it to you as well.",
         ("AX09215603",), True),  # English
    Case("songwriter_ipi_number",
         "Royalties from your streaming service still aren't reaching me; my songwriter IPI number is "
         "00523879412.",
         ("00523879412",), True),  # English
    Case("census_internet_access_code",
         "The census website says my household's internet access code 7Q4D 2KJX 9M3P was already used, "
         "but I haven't submitted anything.",
         ("7Q4D 2KJX 9M3P",), True),  # English
    Case("fertility_clinic_patient_number",
         "Could you resend the invoice for my last IVF cycle? My fertility clinic patient no. is "
         "FC-30915.",
         ("FC-30915",), True),  # English
    Case("marketplace_seller_username",
         "My seller username is lensandlight_77 and all my vintage camera listings vanished overnight.",
         ("lensandlight_77",), True),  # English
    Case("school_meal_payment_account",
         "I topped up yesterday but my son's school meals account 5520-1187-09 still shows a zero "
         "balance.",
         ("5520-1187-09",), True),  # English
    Case("vessel_mmsi_number",
         "Please fix the renewal letter for the marina berth: my yacht's MMSI 235098412 was printed "
         "wrong.",
         ("235098412",), True),  # English
    # ---------------------------------------------------------------- Spanish (3)
    Case("municipal_residence_registration_number",
         "Para darme de alta en el servicio de agua me pedís el número de inscripción en el padrón: es "
         "28079-004518-3.",
         ("28079-004518-3",), True),  # Spanish
    Case("food_handler_certificate_number",
         "Necesito que actualicéis mi perfil de repartidor con mi carné de manipulador de alimentos "
         "nº MA/2024/118273.",
         ("MA/2024/118273",), True),  # Spanish
    Case("domestic_partnership_registry_number",
         "Para añadir a mi pareja al seguro pedís la inscripción en el registro de parejas de hecho, "
         "que es la número 4417/2019.",
         ("4417/2019",), True),  # Spanish
    # ---------------------------------------------------------------- Portuguese (2)
    Case("short_term_rental_licence_number",
         "O vosso site de reservas não aceita o número de registo do meu alojamento local, 123456/AL, "
         "e não consigo publicar o apartamento.",
         ("123456/AL",), True),  # Portuguese (Portugal)
    Case("rural_environmental_registry_number",
         "Para liberar o crédito rural vocês pediram o recibo do CAR do meu sítio: "
         "MG-3106200-4F2A.91C0.7B3E.11D8.A6E5.29F0.3C47.8D1B.",
         ("MG-3106200-4F2A.91C0.7B3E.11D8.A6E5.29F0.3C47.8D1B",), True),  # Portuguese (Brazil)
    # ---------------------------------------------------------------- French (2)
    Case("childminder_approval_number",
         "Je suis assistante maternelle et votre plateforme refuse mon numéro d'agrément "
         "75-AM-2021-0348, pouvez-vous vérifier ?",
         ("75-AM-2021-0348",), True),  # French
    Case("driving_school_neph_number",
         "Mon auto-école me dit que mon numéro NEPH 120875400123 n'apparaît pas dans votre système de "
         "réservation.",
         ("120875400123",), True),  # French
    # ---------------------------------------------------------------- German (2)
    Case("university_admission_applicant_number",
         "Ich habe mich über Ihr Portal beworben, aber meine Bewerber-ID B7K-4Q2-19X wird beim Login "
         "nicht erkannt.",
         ("B7K-4Q2-19X",), True),  # German
    Case("housing_eligibility_certificate_number",
         "Für die Wohnung aus Ihrer Anzeige brauchen Sie meinen Wohnberechtigungsschein, die Nummer "
         "lautet 160/2024-0932.",
         ("160/2024-0932",), True),  # German
    # ---------------------------------------------------------------- Italian (2)
    Case("boating_licence_number",
         "Per il noleggio del gommone vi mando la mia patente nautica n. GE 004127, rilasciata "
         "quest'anno.",
         ("GE 004127",), True),  # Italian
    Case("isee_declaration_protocol_number",
         "Per lo sconto sulla retta mi chiedete l'ISEE: il protocollo della mia DSU è "
         "INPS-ISEE-2024-00318274Q-00.",
         ("INPS-ISEE-2024-00318274Q-00",), True),  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    Case("government_login_username",
         "Bij het koppelen van mijn account met DigiD krijg ik een foutmelding; mijn DigiD-gebruikersnaam "
         "is tulpfiets81.",
         ("tulpfiets81",), True),  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    Case("energy_performance_certificate_number",
         "Do wniosku o dopłatę dołączam świadectwo charakterystyki energetycznej mojego domu nr "
         "SCHE/2023/14/00781, proszę o potwierdzenie.",
         ("SCHE/2023/14/00781",), True),  # Polish
    # ---------------------------------------------------------------- Russian (2)
    Case("gto_participant_uin",
         "Для скидки в вашем спортивном магазине я указал свой УИН ГТО 21-77-0012345, но промокод так "
         "и не пришёл.",
         ("21-77-0012345",), True),  # Russian
    Case("maternity_capital_certificate_number",
         "Хочу погасить ипотеку материнским капиталом, номер моего сертификата — 7701-0457812; что ещё "
         "нужно прислать?",
         ("7701-0457812",), True),  # Russian
    # ---------------------------------------------------------------- Ukrainian (1)
    Case("idp_certificate_number",
         "Для знижки на тариф ви просите довідку ВПО, її номер 6312-7400148912, видана минулого року.",
         ("6312-7400148912",), True),  # Ukrainian
    # ---------------------------------------------------------------- Turkish (2)
    Case("livestock_ear_tag_number",
         "Sigorta başvurumda ineğimin küpe numarası TR340012345678'i yazdım ama sistem kabul etmiyor.",
         ("TR340012345678",), True),  # Turkish
    Case("student_dormitory_application_number",
         "Öğrenci indirimi için KYK yurt başvuru numaramı 2024-38817455 olarak girdim ama uygulamanız "
         "hata veriyor.",
         ("2024-38817455",), True),  # Turkish
    # ---------------------------------------------------------------- Arabic (2)
    Case("freelance_permit_number",
         "أرغب في فتح حساب تاجر لديكم، ورقم وثيقة العمل الحر الخاصة بي هو ٤٨٢٠١٩٣٧٥١، فما المستندات "
         "الأخرى المطلوبة؟",
         ("٤٨٢٠١٩٣٧٥١",), True),  # Arabic
    Case("national_address_short_code",
         "المندوب لم يجد منزلي، والعنوان الوطني المختصر الخاص بي هو RRRD2929، أرجو تحديثه في الطلب.",
         ("RRRD2929",), True),  # Arabic
    # ---------------------------------------------------------------- Persian (2)
    Case("fuel_quota_card_number",
         "کارت سوخت شخصی من با شماره ۷۰۴۲۱۸۳۳۶۵ در اپلیکیشن شما ثبت نمی‌شود، لطفاً بررسی کنید.",
         ("۷۰۴۲۱۸۳۳۶۵",), True),  # Persian
    Case("car_purchase_lottery_registration_code",
         "کد رهگیری ثبت‌نام من در طرح فروش خودرو 1403-77102846 است ولی هنوز پیامکی از شما دریافت "
         "نکرده‌ام.",
         ("1403-77102846",), True),  # Persian
    # ---------------------------------------------------------------- Urdu (2)
    Case("farmer_subsidy_card_number",
         "کھاد کی خریداری پر سبسڈی نہیں ملی، میرے کسان کارڈ کا نمبر 6011-2234-5571 ہے۔",
         ("6011-2234-5571",), True),  # Urdu
    Case("prize_bond_number",
         "میں نے آپ کی برانچ میں اپنا پرائز بانڈ نمبر ۸۳۴۵۶۷ جمع کرایا تھا، رقم ابھی تک نہیں آئی۔",
         ("۸۳۴۵۶۷",), True),  # Urdu
    # ---------------------------------------------------------------- Hindi (2)
    Case("eshram_card_number",
         "मेरा ई-श्रम कार्ड नंबर ४५१२ ७७०३ ९८२१ है, फिर भी आपकी ऐप में बीमा का विकल्प नहीं दिख रहा।",
         ("४५१२ ७७०३ ९८२१",), True),  # Hindi
    Case("nrega_job_card_number",
         "मेरे मनरेगा जॉब कार्ड (संख्या UP-12-003-004-001/123) की मज़दूरी आपके बैंक में अब तक नहीं आई।",
         ("UP-12-003-004-001/123",), True),  # Hindi
    # ---------------------------------------------------------------- Bengali (1)
    Case("facebook_username",
         "আপনাদের পেজে মেসেজ করতে পারছি না; আমার ফেসবুক ইউজারনেম sumi.akter.92, ওটা দিয়েই যোগাযোগ "
         "করেছিলাম।",
         ("sumi.akter.92",), True),  # Bengali
    # ---------------------------------------------------------------- Marathi (1)
    Case("land_survey_number",
         "पीक कर्जाच्या अर्जात माझ्या शेताचा गट क्रमांक २४५/२ चुकीचा नोंदवला गेला आहे.",
         ("२४५/२",), True),  # Marathi
    # ---------------------------------------------------------------- Tamil (2)
    Case("jallikattu_bull_registration_number",
         "என் காளையின் ஜல்லிக்கட்டு பதிவு எண் MDU-JK-2024-0518 உங்கள் இணையதளத்தில் ஏற்கப்படவில்லை.",
         ("MDU-JK-2024-0518",), True),  # Tamil
    Case("fisherman_identity_card_number",
         "படகு காப்பீட்டுக்காக என் மீனவர் அடையாள அட்டை எண் TN/NGP/04471-ஐ ஏற்கனவே அனுப்பியிருக்கிறேன்.",
         ("TN/NGP/04471",), True),  # Tamil
    # ---------------------------------------------------------------- Telugu (1)
    Case("self_help_group_member_id",
         "మా డ్వాక్రా సంఘంలో నా సభ్యత్వ సంఖ్య SHG-AP-55120-07, కానీ మీ లోన్ యాప్ దాన్ని గుర్తించడం లేదు.",
         ("SHG-AP-55120-07",), True),  # Telugu
    # ---------------------------------------------------------------- Gujarati (1)
    Case("artisan_identity_card_number",
         "મારું કારીગર ઓળખ કાર્ડ નંબર ૨૪૦૭૧૧૮૫૩૬ છે, છતાં તમારા પ્રદર્શન સ્ટોલ માટે નોંધણી થતી નથી.",
         ("૨૪૦૭૧૧૮૫૩૬",), True),  # Gujarati
    # ---------------------------------------------------------------- Japanese (2)
    Case("hazardous_materials_handler_licence_number",
         "求人サイトのプロフィールで危険物取扱者の免状番号13A0477215を入力するとエラーになります。",
         ("13A0477215",), True),  # Japanese
    Case("solar_fit_facility_id",
         "売電の振込先を変更したいです。うちの太陽光発電の設備IDはF382016B47です。",
         ("F382016B47",), True),  # Japanese
    # ---------------------------------------------------------------- Korean (1)
    Case("volunteer_registry_id",
         "1365 자원봉사 포털 회원번호 VM20193377로 봉사시간 확인서를 신청했는데 아직 발급이 안 됐어요.",
         ("VM20193377",), True),  # Korean
    # ---------------------------------------------------------------- Chinese (2)
    Case("teacher_qualification_certificate_number",
         "你们的家教平台一直审核不通过，我的教师资格证书编号是2021440112300567，请帮忙看一下。",
         ("2021440112300567",), True),  # Chinese (simplified)
    Case("bilibili_uid",
         "我的B站UID是358120947，绑定你们的会员后一直显示失败。",
         ("358120947",), True),  # Chinese (simplified)
    # ---------------------------------------------------------------- Cantonese (1)
    Case("leisure_facility_booking_account",
         "我嘅康體通戶口號碼係 LL-0092-7713，點解一直訂唔到羽毛球場？",
         ("LL-0092-7713",), True),  # Cantonese (traditional)
    # ---------------------------------------------------------------- Vietnamese (2)
    Case("poor_household_certificate_number",
         "Tôi muốn được giảm cước internet cho hộ nghèo, giấy chứng nhận hộ nghèo của tôi số "
         "125/GCN-UBND.",
         ("125/GCN-UBND",), True),  # Vietnamese
    Case("party_membership_card_number",
         "Khi đăng ký lớp bồi dưỡng, hệ thống của các bạn bắt nhập số thẻ đảng viên; số của tôi là "
         "87.654321 nhưng bị báo lỗi.",
         ("87.654321",), True),  # Vietnamese
    # ---------------------------------------------------------------- Thai (1)
    Case("house_registration_number",
         "ช่างติดตั้งอินเทอร์เน็ตขอรหัสประจำบ้านของผม ๑๐๐๒-๐๔๕๖๗๘-๙ ครับ จะส่งให้ทางไหนดีครับ",
         ("๑๐๐๒-๐๔๕๖๗๘-๙",), True),  # Thai
    # ---------------------------------------------------------------- Indonesian (1)
    Case("gig_driver_partner_id",
         "Saya mitra pengemudi dan ID mitra saya D-3310-77821, tapi saldo penghasilan minggu ini belum "
         "masuk.",
         ("D-3310-77821",), True),  # Indonesian
    # ---------------------------------------------------------------- Swahili (1)
    Case("psv_driver_badge_number",
         "Nimejaribu kujisajili kama dereva kwenye programu yenu, lakini namba ya beji yangu ya PSV "
         "0044719 inakataliwa.",
         ("0044719",), True),  # Swahili
    # ---------------------------------------------------------------- Greek (1)
    Case("property_tax_identity_number",
         "Για την ασφάλιση κατοικίας μού ζητάτε τον ΑΤΑΚ του διαμερίσματός μου, ο οποίος είναι "
         "01234567891.",
         ("01234567891",), True),  # Greek
    # ---------------------------------------------------------------- Czech (2)
    Case("government_data_box_id",
         "Pošlete mi prosím vyúčtování do datové schránky, její ID je k7m3pqx, a ne poštou.",
         ("k7m3pqx",), True),  # Czech
    Case("beekeeper_registration_number",
         "K objednávce úlů chci uplatnit slevu pro chovatele; moje registrační číslo chovatele včel je "
         "CZ 40218577.",
         ("CZ 40218577",), True),  # Czech
    # ---------------------------------------------------------------- Romanian (1)
    Case("car_scrappage_programme_file_number",
         "Dealerul vostru spune că dosarul meu Rabla nr. RB-2024-118307 nu apare în sistem, deși a fost "
         "aprobat.",
         ("RB-2024-118307",), True),  # Romanian
    # ---------------------------------------------------------------- Hungarian (1)
    Case("address_card_number",
         "A szerződéshez kérik a lakcímkártyám számát: 123456AB, de az online űrlap nem fogadja el.",
         ("123456AB",), True),  # Hungarian
]

BUSINESS7: list[str] = [
    # ---------------------------------------------------------------- English (11)
    "My order No. 4471093 arrived with the wrong charger; the box says model PX-220 and part number "
    "88-1045-B.",  # English
    "I opened support ticket #TK-558201 on 3 March about error code E-0419 and nobody has replied.",  # English
    "The tracking number 1Z 999 AA1 01 2345 6784 hasn't updated since the parcel left your depot on "
    "Monday.",  # English
    "After the firmware update to version 4.12.7 (build 20931), my speaker shows error 0x80070005 every "
    "time it boots.",  # English
    "Invoice INV-2024-00817 charges me £129.99 for two units of SKU HB-3300, but I only ordered one.",  # English
    "My complaint reference CR/2024/55813 was closed without an answer; can someone reopen it?",  # English
    "I stayed in room 512 from 14 to 16 June on rate code BAR-FLEX and the minibar was charged twice.",  # English
    "Flight BA 2491 on 12 May was cancelled and the promo code SPRING25 you sent me doesn't apply at "
    "checkout.",  # English
    "The replacement part, lot number L2309-44B, is from the same faulty batch as the one I returned "
    "under RMA 60071.",  # English
    "I bought 3 packs of item 7730125 at store No. 218 for $14.50 each but was charged $16.50.",  # English
    "Your app version 8.3.1 (build 4410) crashes on the payment screen with code PAY-502.",  # English
    # ---------------------------------------------------------------- Spanish (3)
    "Mi pedido nº 1029-4471 llegó sin el cargador; el modelo es TX-300 y la referencia del artículo "
    "88-2041.",  # Spanish
    "Abrí la incidencia número INC-775120 el 4 de abril por el error E17 de la lavadora y sigue sin "
    "respuesta.",  # Spanish
    "La factura nº F-2024/00931 me cobra 59,90 € por dos unidades del lote 23B-117, pero solo pedí una.",  # Spanish
    # ---------------------------------------------------------------- Portuguese (2)
    "O meu pedido nº 88172 chegou incompleto: falta a peça de referência PR-2210 do modelo AX-90.",  # Portuguese
    "Abri o protocolo de atendimento 2024051700893 há uma semana sobre o código de erro F07 e ninguém "
    "respondeu.",  # Portuguese (Brazil)
    # ---------------------------------------------------------------- French (2)
    "Ma commande n° 5520314 est arrivée abîmée ; le colis n° 6A12345678901 indique pourtant « livré en "
    "bon état ».",  # French
    "Mon ticket SAV 44-8821 concerne l'erreur E:31 sur le lave-linge modèle WL-8400, acheté 499 € le "
    "2 mai.",  # French
    # ---------------------------------------------------------------- German (2)
    "Meine Bestellung Nr. 304-7712209 ist unvollständig, die Artikelnummer 55.120.33 fehlt im Paket.",  # German
    "Seit dem Update auf Firmware 2.4.1 zeigt mein Router Fehlercode 0x1F4; mein Ticket Nr. 918273 ist "
    "seit Tagen offen.",  # German
    # ---------------------------------------------------------------- Italian (2)
    "Il mio ordine n. 77-3310 è arrivato senza il manuale; codice prodotto ITM-4420, lotto 24C118.",  # Italian
    "Ho segnalato il guasto con la pratica n. 2024/55102 ma l'errore F05 sulla caldaia compare ancora.",  # Italian
    # ---------------------------------------------------------------- Dutch (1)
    "Mijn bestelnummer 4400128812 is nog niet verzonden en artikelnummer 8719-3320 staat niet meer in "
    "de webshop.",  # Dutch
    # ---------------------------------------------------------------- Polish (1)
    "Moje zamówienie nr 8812/04/2024 nadal nie zostało wysłane, a numer przesyłki 00340434161234567890 "
    "nie działa.",  # Polish
    # ---------------------------------------------------------------- Russian (2)
    "Мой заказ № 45-881203 пришёл без зарядки, артикул товара 7701-22, модель ZX-5.",  # Russian
    "По обращению № 558120 от 3 мая до сих пор нет ответа, ошибка 0xC0000142 после обновления до "
    "версии 3.2.",  # Russian
    # ---------------------------------------------------------------- Ukrainian (1)
    "Номер накладної 20450812345678 не відстежується, а моє замовлення № 77120 оплачене ще 2 травня.",  # Ukrainian
    # ---------------------------------------------------------------- Turkish (2)
    "Sipariş numaram 9981-2204'ün kargosu üç gündür aynı şubede bekliyor.",  # Turkish
    "Şikâyet no. 44120 olarak kaydettiğim E-21 hata kodu, 3.1.4 sürümüne güncellemeden sonra da devam "
    "ediyor.",  # Turkish
    # ---------------------------------------------------------------- Arabic (2)
    "رقم طلبي ٥٥٢٠١٨ لم يصل حتى الآن، ورقم الشحنة SA-7712093 لا يظهر في نظام التتبع.",  # Arabic
    "فتحت تذكرة دعم برقم 40981 بخصوص رمز الخطأ E-05 في الغسالة موديل WM-720 التي اشتريتها بسعر 1,499 "
    "ريالاً.",  # Arabic
    # ---------------------------------------------------------------- Persian (2)
    "سفارش شماره ۴۴۸۱۲۰ من هنوز ارسال نشده و کد رهگیری مرسوله ۲۳۴۵۶۷۸۹۰۱ هم کار نمی‌کند.",  # Persian
    "فاکتور شماره 1403/2281 برای دو عدد از کالای کد KP-550 صادر شده، در حالی که من یکی خریدم.",  # Persian
    # ---------------------------------------------------------------- Urdu (2)
    "میرا آرڈر نمبر ۷۷۲۱۰ ابھی تک نہیں پہنچا، اور کمپلینٹ نمبر CMP-4410 بھی بند کر دیا گیا ہے۔",  # Urdu
    "ماڈل AC-1.5T کے انورٹر پر ایرر کوڈ E6 آ رہا ہے، ڈبے پر بیچ نمبر 2307-KH لکھا ہے۔",  # Urdu
    # ---------------------------------------------------------------- Hindi (2)
    "मेरा ऑर्डर नंबर ४४१२०९ अभी तक नहीं आया और ट्रैकिंग नंबर DL-88120334 पर कोई अपडेट नहीं है।",  # Hindi
    "शिकायत संख्या 55018 दर्ज किए एक हफ्ता हो गया, फ्रिज मॉडल RF-260 में एरर कोड E3 अब भी आ रहा है।",  # Hindi
    # ---------------------------------------------------------------- Bengali (2)
    "আমার অর্ডার নম্বর ৭৭১২৩ এর সাথে ইনভয়েস নম্বর INV-৪৪০৯ মিলছে না, দাম দেখাচ্ছে ১,২৯৯ টাকা।",  # Bengali
    "টিকিট নম্বর 88012 খোলার পরও ফ্যান মডেল CF-56 এর ব্যাচ নম্বর B-2210 নিয়ে কেউ যোগাযোগ করেনি।",  # Bengali
    # ---------------------------------------------------------------- Marathi (1)
    "माझ्या ऑर्डर क्रमांक ६६०१२ मध्ये मिक्सर मॉडेल MG-500 ऐवजी MG-300 आले, बिल क्रमांक B/2024/118 पहा.",  # Marathi
    # ---------------------------------------------------------------- Tamil (2)
    "என் ஆர்டர் எண் 881203 இல் வந்த ஹெட்போன் மாடல் HP-20 வேலை செய்யவில்லை.",  # Tamil
    "புகார் எண் CMP-55120 பதிவு செய்து பத்து நாட்கள் ஆகியும் வாஷிங் மெஷின் பிழைக் குறியீடு E21 சரி "
    "செய்யப்படவில்லை.",  # Tamil
    # ---------------------------------------------------------------- Telugu (1)
    "నా ఆర్డర్ నంబర్ 440912 కి ఇన్వాయిస్ నంబర్ INV-7781 రాలేదు, ధర ₹1,899 అని చూపిస్తోంది.",  # Telugu
    # ---------------------------------------------------------------- Gujarati (1)
    "મારા ઓર્ડર નંબર ૫૫૧૨૦ માં પંખાનો મોડેલ નંબર FN-48 ખોટો આવ્યો છે, બિલ નંબર ૨૨૦૯ જુઓ.",  # Gujarati
    # ---------------------------------------------------------------- Japanese (2)
    "注文番号 250-7781203-4415 の商品がまだ届きません。追跡番号は 4471-2290-8812 です。",  # Japanese
    "アプリをバージョン5.2.1にしてから、エラーコード E-1023 が出てログインできません。"
    "問い合わせ番号は Q2024-0518 です。",  # Japanese
    # ---------------------------------------------------------------- Korean (2)
    "주문번호 20240518-0071234로 주문한 청소기(모델 VC-880)가 아직 배송되지 않았습니다.",  # Korean
    "문의 번호 CS-558120으로 접수한 오류 코드 E5 건이 일주일째 처리되지 않고 있어요.",  # Korean
    # ---------------------------------------------------------------- Chinese (2)
    "我的订单号 202405180771203 一直显示未发货，快递单号 SF1234567890123 也查不到。",  # Chinese (simplified)
    "投诉编号 TS-2024-0518 已经提交三天了，空调型号 KFR-35GW 还是报 E1 故障。",  # Chinese (simplified)
    # ---------------------------------------------------------------- Cantonese (1)
    "我張單號 HK-771203 嘅貨話咗三日到，而家已經一個禮拜，型號 AB-220 仲話缺貨。",  # Cantonese (traditional)
    # ---------------------------------------------------------------- Vietnamese (2)
    "Đơn hàng số 88120339 của tôi bị giao nhầm màu, mã sản phẩm SP-2210, giá 459.000 đ.",  # Vietnamese
    "Tôi đã gửi khiếu nại số KN-2024-0518 về lỗi E4 của máy giặt nhưng chưa ai liên hệ.",  # Vietnamese
    # ---------------------------------------------------------------- Thai (1)
    "คำสั่งซื้อเลขที่ ๒๐๒๔๐๕๑๘๗๗ ของผมยังไม่ได้รับ และเลขพัสดุ TH1234567890 ก็ติดตามไม่ได้ครับ",  # Thai
    # ---------------------------------------------------------------- Indonesian (1)
    "Pesanan saya nomor INV/20240518/MPL/7712 belum dikirim, padahal nomor resi JP1234567890 sudah "
    "keluar.",  # Indonesian
    # ---------------------------------------------------------------- Swahili (1)
    "Oda yangu namba 44120 haijafika, na namba ya ufuatiliaji TZ-771209 haionyeshi chochote.",  # Swahili
    # ---------------------------------------------------------------- Greek (1)
    "Η παραγγελία μου με αριθμό 5520-7781 ήρθε χωρίς το καλώδιο, κωδικός προϊόντος ΚΠ-220.",  # Greek
    # ---------------------------------------------------------------- Czech (1)
    "Moje objednávka č. 2024-55120 dorazila bez kabelu, kód zboží KZ-4410, šarže 23/118.",  # Czech
    # ---------------------------------------------------------------- Romanian (1)
    "Comanda mea nr. 7712093 a venit fără telecomandă, iar tichetul de suport nr. 4481 este încă "
    "deschis.",  # Romanian
    # ---------------------------------------------------------------- Hungarian (1)
    "A 88120339 számú rendelésem még nem érkezett meg, a hibajegy száma HJ-5520, hibakód E-07.",  # Hungarian
]
