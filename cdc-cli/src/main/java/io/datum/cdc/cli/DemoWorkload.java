package io.datum.cdc.cli;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.SQLException;

/** The demo's schema and scripted changes. */
final class DemoWorkload {

  private final EmbeddedPostgresServer pg;

  DemoWorkload(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  void createSchema() throws SQLException {
    pg.execute(
        "CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, email text,"
            + " vip boolean NOT NULL DEFAULT false, joined date, last_seen timestamptz)",
        // full old rows in updates and deletes
        "ALTER TABLE customers REPLICA IDENTITY FULL",
        "CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers,"
            + " total numeric(12,2) NOT NULL, status text NOT NULL, tags text[], details jsonb,"
            + " placed_at timestamp)",
        "CREATE TABLE audit_log (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), seq int NOT NULL,"
            + " payload bytea, ratio double precision, took interval)",
        "CREATE PUBLICATION pgcdc_demo FOR TABLE customers, orders, audit_log");
  }

  /** Inserts, updates, a delete, then one large transaction. */
  void runBeforeKill(int largeTransactionRows) throws SQLException {
    pg.execute(
        "INSERT INTO customers (name, email, joined, last_seen) VALUES"
            + " ('Ada', 'ada@example.com', '2026-01-15', '2026-11-30 09:00:00+00'),"
            + " ('Grace', NULL, '2025-12-01', NULL), ('Linus', 'linus@example.com', '2026-06-30', now())",
        "BEGIN;"
            + " INSERT INTO orders (customer_id, total, status, tags, details, placed_at) VALUES"
            + " (1, 12.340, 'new', '{book,gift}', '{\"gift_wrap\": true, \"note\": \"happy birthday\"}',"
            + " '2026-11-30 10:18:40.123456'),"
            + " (2, 99.99, 'new', NULL, '{}', '2026-11-30 10:20:00');"
            + " UPDATE customers SET vip = true WHERE id = 1;"
            + " COMMIT",
        "UPDATE orders SET status = 'shipped', tags = array_append(tags, 'express') WHERE id = 1",
        "UPDATE customers SET email = 'grace@example.com' WHERE id = 2",
        "DELETE FROM orders WHERE id = 2",
        "INSERT INTO audit_log (seq, payload, ratio, took) SELECT g, int4send(g), g / 7.0,"
            + " make_interval(secs => g * 1.5) FROM generate_series(1, "
            + largeTransactionRows
            + ") g");
  }

  /** Changes written while no source runs. */
  void runWhileDown() throws SQLException {
    pg.execute(
        "INSERT INTO orders (customer_id, total, status) VALUES (3, 5.00, 'new')",
        "TRUNCATE audit_log");
  }

  /** Changes written after the restart. */
  void runAfterRestart() throws SQLException {
    pg.execute(
        "UPDATE orders SET status = 'cancelled' WHERE customer_id = 3",
        "BEGIN; DELETE FROM orders WHERE customer_id = 3; DELETE FROM customers WHERE id = 3; COMMIT",
        "INSERT INTO customers (name, email, joined) VALUES ('Edsger', 'ewd@example.com', '1930-05-11')");
  }
}
