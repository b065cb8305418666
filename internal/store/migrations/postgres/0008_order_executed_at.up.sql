-- When the broker last executed shares of each order, on the broker's own
-- clock (its lastUpdated on the answer that showed them), so that a
-- report dates a fill on the trading day the broker made it, not on the
-- day locator heard of it. '' when locator has no such time (orders from
-- before this migration, or an answer without a zone).
ALTER TABLE orders ADD COLUMN executed_at TEXT NOT NULL DEFAULT '';
