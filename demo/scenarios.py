"""One builder per business scenario (docs/rationale.md#scenarios): FAQ, ticket, complex consultation,
multi-turn, long-context RAG and tool call.

A builder returns a `Draft`: messages whose personal data is still marked (``mark(kind, value)``)
so that the same conversation can be rendered with raw values (the business logs) or with typed
placeholders (the training corpus, which never sees raw PII).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from demo import pii_values as pv
from demo.world import (FEATURES, PLANS, PRODUCTS, SYSTEM_PROMPTS, TOOLS, plan_for,
                                 tool_call)

MARK = "\x1e"  # record separator: never appears in generated text


def mark(kind: str, value: str) -> str:
    return f"{MARK}{kind}|{value}{MARK}"


@dataclass
class Draft:
    scenario: str
    difficulty: str
    messages: list[dict]
    reference: str
    rubric: dict
    tools: list[dict] | None = None
    meta: dict = field(default_factory=dict)


GREETINGS = ("", "Hi.", "Hello!", "Hi there,", "Good morning.", "Hey,", "Good afternoon!",
             "Hello team,", "Hi, quick question.", "Greetings.", "Evening!", "Hi support,")
SIGNOFFS = ("", "Thanks!", "Thank you.", "Cheers.", "Appreciate it.", "Thanks in advance.",
            "Many thanks.", "Kind regards.")
RELATIVES = ("sister", "brother", "mother", "father", "colleague", "neighbour", "cousin", "friend",
             "grandmother", "partner", "son", "daughter", "boss", "roommate")
OCCASIONS = ("birthday", "anniversary", "graduation", "new flat", "retirement", "office",
             "holiday trip", "new job", "studio", "weekend cabin")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
COLORS = ("black", "white", "silver", "blue", "red", "green", "graphite", "gold", "orange",
          "purple")
CONTEXTS = (
    "I ordered it on {day} for my {rel}'s {occ}.",
    "It was a present for my {rel}, who loves it so far.",
    "My {rel} recommended it after using one at the {occ}.",
    "I'm comparing a few options before the {occ}.",
    "We bought one on {day} and may need another for the {occ}.",
    "The {color} one arrived on {day}.",
    "I picked the {color} version because my {rel} has the same.",
    "Still deciding whether to keep it after the {occ}.",
)


def _context(rng: random.Random) -> str:
    return rng.choice(CONTEXTS).format(day=rng.choice(WEEKDAYS), rel=rng.choice(RELATIVES),
                                       occ=rng.choice(OCCASIONS), color=rng.choice(COLORS))


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


def _name_intro(rng: random.Random, name: str) -> str:
    return rng.choice(("My name is {n}.", "This is {n}.", "I'm {n}.", "{n} here.")).format(
        n=mark("PERSON", name))


# --- FAQ -------------------------------------------------------------------------------------
FAQ_QUESTIONS = {
    "return": ("How long do I have to return the {p}?", "What is the return window for the {p}?",
               "How many days do I get to send back a {p}?",
               "If I don't like the {p}, how long can I still return it?",
               "Until when can the {p} be returned?"),
    "warranty": ("How long is the warranty on the {p}?", "What warranty comes with the {p}?",
                 "For how many months is the {p} covered by warranty?",
                 "Is the {p} still under warranty after a year? How long does it last?",
                 "What is the warranty period of a {p}?"),
    "delivery": ("How long does delivery of the {p} take?", "When will a {p} arrive if I order today?",
                 "How many business days does shipping take for the {p}?",
                 "What is the delivery time for the {p}?", "How fast do you ship the {p}?"),
}


def _faq_answer(topic: str, product: str) -> tuple[str, str]:
    ret, war, dlv = PRODUCTS[product]
    if topic == "return":
        return f"The {product} can be returned within {ret} days of delivery.", f"{ret} days"
    if topic == "warranty":
        return f"The {product} has a warranty of {war} months.", f"{war} months"
    return f"The {product} is delivered within {dlv} business days.", f"{dlv} business days"


def faq(rng: random.Random) -> Draft:
    product = rng.choice(list(PRODUCTS))
    topic = rng.choice(("return", "warranty", "delivery"))
    question = rng.choice(FAQ_QUESTIONS[topic]).format(p=product)
    difficulty = "easy"
    user = [rng.choice(GREETINGS)]
    name = pv.person(rng) if rng.random() < 0.35 else None
    if name:
        user.append(_name_intro(rng, name))
    if rng.random() < 0.8:
        user.append(_context(rng))
    if rng.random() < 0.35:  # a second product is mentioned: the model must answer the right one
        other = rng.choice([p for p in PRODUCTS if p != product])
        user.append(f"I also own the {other}, but this is about the {product}.")
        difficulty = "hard"
    elif rng.random() < 0.3:
        difficulty = "medium"
        user.append(f"You can reach me at {mark('EMAIL', pv.email(rng, name))}.")
    user += [question, rng.choice(SIGNOFFS)]
    answer, fact = _faq_answer(topic, product)
    if name and rng.random() < 0.5:
        answer = f"Hello {mark('PERSON', name)}. {answer}"
    return Draft("faq", difficulty,
                 [{"role": "system", "content": SYSTEM_PROMPTS["faq"]},
                  {"role": "user", "content": _join(*user)},
                  {"role": "assistant", "content": answer}],
                 answer, {"type": "key_facts", "key_facts": [fact]}, meta={"topic": topic})


# --- ticket triage ---------------------------------------------------------------------------
TICKET_ISSUES = {
    "billing": ("I was charged twice for my subscription this month.",
                "My invoice shows the wrong amount.", "The refund you promised has not arrived.",
                "I was billed after I cancelled my plan.", "The discount code was not applied to my bill.",
                "My card {card} was charged for an order I never placed."),
    "technical": ("The app crashes every time I open settings.", "My {p} will not turn on.",
                  "The firmware update fails with an error.", "The {p} keeps disconnecting from wifi.",
                  "Syncing stopped working after the last update.",
                  "The dashboard at {ip} shows a blank page.",
                  "Your API rejects my key {secret} with an error."),
    "account": ("I cannot log in to my account.", "I need to change the email on my account.",
                "Two-factor codes are not arriving on my phone {phone}.",
                "My account was locked after a password reset.",
                "Please update the account holder name, I need it for verification with ID {nid}.",
                "I want to merge my two accounts."),
    "shipping": ("My package has not arrived yet.", "The tracking number does not work.",
                 "The box arrived damaged.", "I received the wrong item instead of the {p}.",
                 "The courier left my parcel at the wrong address.",
                 "Delivery was promised for {day} but nothing came."),
}
PRIORITY_CUES = {
    "high": ("This is urgent.", "Our whole team is blocked.", "Please help as soon as possible.",
             "We are losing sales because of this.", "I need this fixed today."),
    "low": ("No rush.", "Whenever you have time.", "Just letting you know.",
            "It is not urgent at all.", "Low priority for me."),
    "medium": ("", "Could you take a look?", "Please advise.", "Let me know what to do.", ""),
}


def _issue(rng: random.Random, category: str) -> str:
    name = pv.person(rng)
    return rng.choice(TICKET_ISSUES[category]).format(
        p=rng.choice(list(PRODUCTS)), day=rng.choice(WEEKDAYS), card=mark("CARD", pv.card(rng)),
        ip=mark("IP", pv.ip_address(rng)), secret=mark("SECRET", pv.secret(rng)),
        phone=mark("PHONE", pv.phone(rng)), nid=mark("NATIONAL_ID", pv.national_id(rng)),
        name=name)


def ticket(rng: random.Random) -> Draft:
    category = rng.choice(("billing", "technical", "account", "shipping"))
    priority = rng.choice(("low", "medium", "high"))
    parts = [rng.choice(GREETINGS), _issue(rng, category)]
    difficulty = "easy"
    if rng.random() < 0.4:  # a resolved issue of another kind: a distractor the model must ignore
        other = rng.choice([c for c in TICKET_ISSUES if c != category])
        old = _issue(rng, other)
        parts.insert(1, f"Last month I had another problem ({old[0].lower()}{old[1:-1]}), but that "
                        "one is solved now.")
        difficulty = "hard"
    elif rng.random() < 0.4:
        difficulty = "medium"
        parts.append(_context(rng))
    if rng.random() < 0.35:  # customers volunteer identifying details
        parts.append({"billing": f"The card on file is {mark('CARD', pv.card(rng))}.",
                      "account": f"For verification, my ID number is {mark('NATIONAL_ID', pv.national_id(rng))}.",
                      "technical": f"My public IP is {mark('IP', pv.ip_address(rng))}.",
                      "shipping": f"My address is {mark('ADDRESS', pv.address(rng))}."}[category])
    parts.append(rng.choice(PRIORITY_CUES[priority]))
    if rng.random() < 0.4:
        parts.append(f"{rng.choice(('Regards,', 'Thanks,', 'Best,'))} {mark('PERSON', pv.person(rng))}")
    elif rng.random() < 0.3:
        parts.append(f"Reply to {mark('EMAIL', pv.email(rng))} or call {mark('PHONE', pv.phone(rng))}.")
    answer = f"Category: {category}. Priority: {priority}."
    return Draft("ticket", difficulty,
                 [{"role": "system", "content": SYSTEM_PROMPTS["ticket"]},
                  {"role": "user", "content": _join(*parts)},
                  {"role": "assistant", "content": answer}],
                 answer, {"type": "exact"})


# --- complex consultation: seat arithmetic and plan choice -----------------------------------
def consultation(rng: random.Random) -> Draft:
    intro = ""
    if rng.random() < 0.3:
        intro = f"{_name_intro(rng, pv.person(rng))} I run IT at a company of about {rng.randint(5, 900)} staff."
    if rng.random() < 0.5:
        have, add = rng.randint(2, 99), rng.randint(1, 99)
        if rng.random() < 0.45:
            remove = rng.randint(1, have + add - 1)
            total = have + add - remove
            q = rng.choice((
                "We have {a} seats, will add {b} for the new hires and remove {c} for people who left. "
                "How many seats will we pay for?",
                "Our plan has {a} seats. Next month we add {b} and drop {c}. What is the new seat count?",
                "Starting from {a} licences, we buy {b} more and cancel {c}. How many licences remain?"))
            question, difficulty = q.format(a=have, b=add, c=remove), "hard"
        else:
            total = have + add
            q = rng.choice(("We have {a} seats and need {b} more. How many seats will we have?",
                            "Our plan has {a} licences and we are adding {b}. What is the total?",
                            "If we add {b} users to our {a} current users, how many users is that?"))
            question, difficulty = q.format(a=have, b=add), "medium" if total >= 100 else "easy"
        answer = f"You will have {total} seats in total."
        rubric = {"type": "numeric", "expected": total}
        kind = "seats"
    else:
        users = rng.choice((rng.randint(2, 12), rng.randint(8, 60), rng.randint(40, 300),
                            rng.randint(200, 2000)))
        needs = set(rng.sample(FEATURES, k=rng.choice((0, 1, 1, 2, 3))))
        plan = plan_for(users, needs)
        need_text = (" and ".join(sorted(needs)) if needs else "nothing special")
        question = rng.choice((
            "We are {u} people and need {n}. Which plan should we buy?",
            "Which plan fits a team of {u} users that needs {n}?",
            "For {u} employees, with {n} as a requirement, what plan do you recommend?")).format(
                u=users, n=need_text)
        difficulty = "hard" if len(needs) >= 2 or any(abs(users - m) <= 5 for _, m, _ in PLANS) else "medium"
        answer = f"The {plan} plan fits best."
        rubric = {"type": "key_facts", "key_facts": [plan]}
        kind = "plan"
    return Draft("consultation", difficulty,
                 [{"role": "system", "content": SYSTEM_PROMPTS["consultation"]},
                  {"role": "user", "content": _join(rng.choice(GREETINGS), intro, question)},
                  {"role": "assistant", "content": answer}],
                 answer, rubric, meta={"kind": kind})


# --- multi-turn order tracking ---------------------------------------------------------------
def multi_turn(rng: random.Random) -> Draft:
    product = rng.choice(list(PRODUCTS))
    qty, color = rng.randint(1, 9), rng.choice(COLORS)
    addr = mark("ADDRESS", pv.address(rng))
    name = mark("PERSON", pv.person(rng))
    msgs = [{"role": "system", "content": SYSTEM_PROMPTS["multi_turn"]},
            {"role": "user", "content": _join(rng.choice(GREETINGS), rng.choice((
                "I'd like to order {q} {c} {p}.", "Please put down {q} {c} {p} for me.",
                "Can I get {q} {c} {p}?")).format(q=qty, c=color, p=product))},
            {"role": "assistant", "content": f"Noted: {qty} {color} {product}. Where should it go?"},
            {"role": "user", "content": rng.choice((
                "Ship it to {a}, name {n}.", "Deliver to {a}. The recipient is {n}.",
                "Send it to {n} at {a}.")).format(a=addr, n=name)},
            {"role": "assistant", "content": f"Shipping to {addr} for {name}."}]
    changes = rng.choice((0, 1, 1, 2, 2))
    for _ in range(changes):
        if rng.random() < 0.5:
            qty = rng.choice([q for q in range(1, 10) if q != qty])
            msgs += [{"role": "user", "content": rng.choice((
                        "Actually, make it {q}.", "Change the quantity to {q}, please.",
                        "On second thought I need {q} of them.")).format(q=qty)},
                     {"role": "assistant", "content": f"Updated the quantity to {qty}."}]
        else:
            color = rng.choice([c for c in COLORS if c != color])
            msgs += [{"role": "user", "content": rng.choice((
                        "Can I switch the colour to {c}?", "Make it {c} instead.",
                        "I prefer {c}, please change it.")).format(c=color)},
                     {"role": "assistant", "content": f"Updated the colour to {color}."}]
    msgs.append({"role": "user", "content": rng.choice((
        "Can you confirm my order?", "Please read back the whole order.", "What exactly did I order?",
        "Summarise my order, please."))})
    answer = f"Your order: {qty} {color} {product}, shipping to {addr} for {name}."
    msgs.append({"role": "assistant", "content": answer})
    return Draft("multi_turn", ("easy", "medium", "hard")[changes], msgs, answer, {"type": "exact"})


# --- long-context RAG ------------------------------------------------------------------------
SYLLABLES = ("kel", "vra", "tor", "mi", "zen", "qua", "lo", "rix", "pan", "dro", "sel", "ny",
             "gar", "ol", "bri", "tes", "ax", "um", "fen", "dal")
ATTRIBUTES = (
    ("battery", "Its battery lasts {v} hours.", "How many hours does the battery of the {n} last?",
     lambda r: r.randint(4, 72), "{v} hours"),
    ("weight", "It weighs {v} grams.", "How much does the {n} weigh?", lambda r: r.randint(90, 2400),
     "{v} grams"),
    ("firmware", "The current firmware is version {v}.", "Which firmware version does the {n} run?",
     lambda r: f"{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}", "{v}"),
    ("range", "Its wireless range is {v} meters.", "What is the wireless range of the {n}?",
     lambda r: r.randint(5, 300), "{v} meters"),
    ("price", "It costs {v} dollars.", "What does the {n} cost?", lambda r: r.randint(19, 1999),
     "{v} dollars"),
    ("code", "Its support code is {v}.", "What is the support code of the {n}?",
     lambda r: f"SC-{r.randint(1000, 9999)}", "{v}"),
    ("release", "It was released in {v}.", "When was the {n} released?",
     lambda r: f"{r.choice(('March', 'June', 'September', 'December', 'April'))} {r.randint(2015, 2026)}",
     "{v}"),
    ("factory", "It is assembled in {v}.", "Where is the {n} assembled?",
     lambda r: r.choice(("Tallinn", "Porto", "Osaka", "Monterrey", "Gdansk", "Penang", "Brno")), "{v}"),
)
FILLER = ("The device was designed for small offices.", "Customers praised its quiet operation.",
          "Setup takes a few minutes with the mobile app.", "It ships with a quick start guide.",
          "Spare parts are stocked for several years.", "A carrying case is sold separately.",
          "The housing is made of recycled aluminium.", "Reviews mention the clear status light.")


def _device_name(rng: random.Random) -> str:
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
    return f"{word} {rng.choice('XKVQZ')}{rng.randint(2, 99)}"


def rag(rng: random.Random) -> Draft:
    n_devices = 2 if rng.random() < 0.4 else 1
    names = [_device_name(rng) for _ in range(n_devices)]
    sentences, facts = [], []
    for name in names:
        attrs = rng.sample(ATTRIBUTES, k=rng.randint(3, 6))
        sentences.append(f"The {name} is a {rng.choice(('router', 'sensor', 'camera', 'hub', 'scanner'))} "
                         f"made by Northwind Devices.")
        for _key, sent, question, value, fact in attrs:
            v = value(rng)
            sentences.append(sent.format(v=v))
            facts.append((name, question, fact.format(v=v)))
        sentences += rng.sample(FILLER, k=rng.randint(1, 3))
    if rng.random() < 0.3:
        sentences.append(f"Press enquiries go to {mark('EMAIL', pv.email(rng))}.")
    name, question, fact = rng.choice(facts)
    difficulty = "hard" if n_devices == 2 else ("medium" if len(sentences) > 7 else "easy")
    document = " ".join(sentences)
    user = f"Document: {document}\n\nQuestion: {question.format(n=name)}"
    answer = f"{fact[0].upper()}{fact[1:]}."
    return Draft("rag", difficulty,
                 [{"role": "system", "content": SYSTEM_PROMPTS["rag"]},
                  {"role": "user", "content": user},
                  {"role": "assistant", "content": answer}],
                 answer, {"type": "key_facts", "key_facts": [fact]})


# --- tool call -------------------------------------------------------------------------------
def tool_call_scenario(rng: random.Random) -> Draft:
    tool = rng.choice([t["name"] for t in TOOLS])
    order = f"ORD-{rng.randint(10000000, 99999999)}"
    difficulty = "medium"
    if tool == "get_order_status":
        text = rng.choice(("Where is my order {o}?", "Can you check the status of order {o}?",
                           "Order {o} has not shown up. What is going on?")).format(o=order)
        args = {"order_id": order}
        difficulty = "easy"
    elif tool == "reset_password":
        mail = mark("EMAIL", pv.email(rng))
        text = rng.choice(("I forgot my password, my login is {e}.", "Please send a reset link to {e}.",
                           "Locked out again. The account email is {e}.")).format(e=mail)
        args = {"email": mail}
        difficulty = "easy"
    elif tool == "schedule_callback":
        tel, day = mark("PHONE", pv.phone(rng)), rng.choice(WEEKDAYS[:5])
        text = rng.choice(("Please call me back on {d} at {t}.", "Can someone phone {t} on {d}?",
                           "I'd like a call on {d}; my number is {t}.")).format(d=day, t=tel)
        args = {"phone": tel, "day": day}
        difficulty = "hard"
    elif tool == "cancel_subscription":
        acc = f"ACC-{rng.randint(100000, 999999)}"
        text = rng.choice(("Cancel the subscription on account {a}.", "Please end my plan, account {a}.",
                           "I want to stop paying. Account number {a}.")).format(a=acc)
        args = {"account_id": acc}
    else:
        addr = mark("ADDRESS", pv.address(rng))
        text = rng.choice(("Please send order {o} to {a} instead.", "I moved. Order {o} should go to {a}.",
                           "Change the delivery address of {o} to {a}.")).format(o=order, a=addr)
        args = {"order_id": order, "address": addr}
        difficulty = "hard"
    if rng.random() < 0.3:
        text = f"{text} My earlier order ORD-{rng.randint(10000000, 99999999)} was fine."
        difficulty = "hard"
    answer = tool_call(tool, **args)
    return Draft("tool_call", difficulty,
                 [{"role": "system", "content": SYSTEM_PROMPTS["tool_call"]},
                  {"role": "user", "content": _join(rng.choice(GREETINGS), text)},
                  {"role": "assistant", "content": answer}],
                 answer, {"type": "json", "expected": {"name": tool, "arguments": args}},
                 tools=TOOLS)


BUILDERS = {"faq": faq, "ticket": ticket, "consultation": consultation,
            "multi_turn": multi_turn, "rag": rag, "tool_call": tool_call_scenario}
# Business traffic is not uniform: FAQs and tickets dominate.
SCENARIO_WEIGHTS = {"faq": 0.22, "ticket": 0.22, "consultation": 0.16, "multi_turn": 0.14,
                    "rag": 0.12, "tool_call": 0.14}
# The demo model's training mix over-samples the skills that take longest to learn (copying
# from long documents, arithmetic, plan rules); the business logs keep the traffic mix above.
TRAINING_WEIGHTS = {"faq": 0.10, "ticket": 0.10, "consultation": 0.27, "multi_turn": 0.10,
                    "rag": 0.31, "tool_call": 0.12}
