"""The demo company's fixed knowledge: products, policies, plans, tools.

Both the demo business logs and the demo model's training corpus draw their facts from here, so
the model can learn them; the *conversations* (wording, entities, values) are drawn per seed.
"""

from __future__ import annotations

import json

PRODUCTS = {
    # product: (return window in days, warranty in months, delivery in business days)
    "Aurora router": (30, 24, 3),
    "Nimbus tablet": (14, 12, 5),
    "Vertex laptop": (30, 36, 7),
    "Pulse earbuds": (45, 6, 2),
    "Orbit smartwatch": (60, 18, 4),
    "Lumen desk lamp": (90, 12, 6),
    "Cascade coffee maker": (21, 24, 8),
    "Summit backpack": (100, 60, 3),
}

TOPICS = ("return", "warranty", "delivery")

# plan: (max users, features) — the smallest plan that satisfies every need is the answer.
PLANS = (
    ("Starter", 10, frozenset()),
    ("Team", 50, frozenset({"single sign-on"})),
    ("Business", 250, frozenset({"single sign-on", "audit logs", "priority support"})),
    ("Enterprise", 100000, frozenset({"single sign-on", "audit logs", "priority support",
                                      "on-premise deployment", "custom contracts"})),
)
FEATURES = ("single sign-on", "audit logs", "priority support", "on-premise deployment",
            "custom contracts")

TICKET_CATEGORIES = ("billing", "technical", "account", "shipping")
PRIORITIES = ("low", "medium", "high")

TOOLS = [
    {"name": "get_order_status", "description": "Look up the status of an order.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"]}},
    {"name": "reset_password", "description": "Send a password reset link.",
     "parameters": {"type": "object", "properties": {"email": {"type": "string"}},
                    "required": ["email"]}},
    {"name": "schedule_callback", "description": "Book a phone call with support.",
     "parameters": {"type": "object", "properties": {"phone": {"type": "string"},
                                                     "day": {"type": "string"}},
                    "required": ["phone", "day"]}},
    {"name": "cancel_subscription", "description": "Cancel a subscription.",
     "parameters": {"type": "object", "properties": {"account_id": {"type": "string"}},
                    "required": ["account_id"]}},
    {"name": "update_shipping_address", "description": "Change where an order is shipped.",
     "parameters": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                     "address": {"type": "string"}},
                    "required": ["order_id", "address"]}},
]

SYSTEM_PROMPTS = {
    "faq": "You are the support assistant of Northwind Devices. Answer policy questions briefly.",
    "ticket": ("Classify the support ticket. Reply with its category (billing, technical, "
               "account, shipping) and priority (low, medium, high)."),
    "consultation": "You are a sales engineer of Northwind Cloud. Answer with the result.",
    "multi_turn": "You take orders for Northwind Devices. Keep track of the customer's order.",
    "rag": "Answer the question using only the document.",
    "tool_call": ("Call one tool to handle the request. Reply with JSON only: "
                  '{"name": ..., "arguments": {...}}. Tools: '
                  + ", ".join(t["name"] for t in TOOLS) + "."),
}


def plan_for(users: int, needs: set[str]) -> str:
    """The smallest plan that fits `users` and every feature in `needs`."""
    for name, max_users, features in PLANS:
        if users <= max_users and needs <= features:
            return name
    return PLANS[-1][0]


def tool_call(name: str, **arguments: str) -> str:
    text = json.dumps({"name": name, "arguments": arguments}, separators=(", ", ": "),
                      ensure_ascii=False)
    return text.replace("\\u001e", "\x1e")  # keep PII marks (a control char) unescaped
