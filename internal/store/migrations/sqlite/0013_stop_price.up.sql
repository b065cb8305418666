-- Stop and StopLimit orders (spec "Orders") carry a stop price: decimal
-- text as sent, empty on the other types.
ALTER TABLE orders ADD COLUMN stop_price TEXT NOT NULL DEFAULT '';
