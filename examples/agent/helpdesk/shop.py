"""The shop the help desk serves: an in-memory SQLite database, and the agent's tools on it.

The tools are plain typed functions (``@hw.tool``): the JSON Schema the model sees comes from
their type hints. ``query_db`` runs whatever SQL it is given; keeping it read-only is the
harness's job (``helpdesk.read_only_sql``), not the tool's.
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any

from pydantic import Field

import harnessweaver as hw

SCHEMA = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, email TEXT, phone TEXT, card TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER, item TEXT, total_usd REAL,
                     status TEXT);
CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id INTEGER, amount_usd REAL, reason TEXT);
INSERT INTO customers VALUES
    (7, 'Dana Whitfield', 'dana.whitfield@example.com', '+44 20 7946 0958', '4111 1111 1111 1111');
INSERT INTO orders VALUES
    (1042, 7, 'espresso machine', 240.0, 'delivered'),
    (1043, 7, 'espresso machine', 240.0, 'paid');
"""


class Shop:
    """The shop's database: customers (with their personal data), orders and refunds."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.row_factory = sqlite3.Row
        self.db.executescript(SCHEMA)

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        return [dict(row) for row in self.db.execute(sql, params)]

    def tools(self) -> list[hw.Tool[..., Any]]:
        """The agent's tools, working on this shop."""
        shop = self

        @hw.tool
        def lookup_order(
            order: Annotated[int, Field(description="the order number")],
        ) -> dict[str, Any]:
            """Look an order up, with the customer who placed it."""
            found = shop.rows(
                "SELECT o.id AS 'order', o.item, o.total_usd, o.status, c.name AS customer, "
                "c.email, c.phone, c.card AS card_on_file "
                "FROM orders o JOIN customers c ON c.id = o.customer WHERE o.id = ?",
                order,
            )
            if not found:
                raise LookupError(order)
            return found[0]

        @hw.tool
        def query_db(sql: Annotated[str, Field(description="one SQL statement")]) -> list[Any]:
            """Run an SQL query on the shop's database (tables customers, orders, refunds)."""
            return shop.rows(sql)

        @hw.tool
        def issue_refund(order: int, amount_usd: float, reason: str) -> dict[str, Any]:
            """Refund (part of) an order to the card it was paid with."""
            cursor = shop.db.execute(
                "INSERT INTO refunds (order_id, amount_usd, reason) VALUES (?, ?, ?)",
                (order, amount_usd, reason),
            )
            shop.db.execute("UPDATE orders SET status = 'refunded' WHERE id = ?", (order,))
            return {"refund": f"R-{cursor.lastrowid}", "order": order, "amount_usd": amount_usd}

        return [lookup_order, query_db, issue_refund]
