package io.datum.cdc.samples.connect;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.SQLException;
import java.util.List;

/**
 * The sample's database: two tables with rows before the connector starts (its initial snapshot
 * reads them), then inserts, updates and deletes in both, some in one transaction; and the records
 * these must give.
 */
final class Shop {

  static final String PREFIX = "shop";
  static final String CUSTOMERS = PREFIX + ".public.customers";
  static final String ORDERS = PREFIX + ".public.orders";

  private Shop() {}

  /** Creates the tables and the rows the snapshot reads. */
  static void createSchema(EmbeddedPostgresServer pg) throws SQLException {
    pg.execute(
        "CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text)",
        "CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL,"
            + " item text NOT NULL, quantity integer NOT NULL, status text NOT NULL)",
        "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Grace', NULL)",
        "INSERT INTO orders VALUES (1, 1, 'notebook', 2, 'new')");
  }

  /** The statements {@link #writeChanges} runs, for the sample to print. */
  static final List<String> CHANGES =
      List.of(
          "BEGIN; INSERT INTO customers VALUES (3, 'Edsger', 'ewd@example.com');"
              + " INSERT INTO orders VALUES (2, 3, 'pencil', 10, 'new'); COMMIT",
          "UPDATE orders SET status = 'shipped' WHERE id = 1",
          "UPDATE customers SET email = 'grace@example.com' WHERE id = 2",
          "BEGIN; DELETE FROM orders WHERE id = 2; DELETE FROM customers WHERE id = 3; COMMIT");

  /** Writes the changes, each transaction in one statement string. */
  static void writeChanges(EmbeddedPostgresServer pg) throws SQLException {
    for (String transaction : CHANGES) {
      pg.execute(transaction);
    }
  }

  /** The records of the snapshot, in each topic's order. */
  static List<ChangeRecord> expectedSnapshot() {
    return List.of(
        ChangeRecord.expect(
            CUSTOMERS,
            "r",
            "{\"id\":1}",
            "{\"id\":1,\"name\":\"Ada\",\"email\":\"ada@example.com\"}"),
        ChangeRecord.expect(
            CUSTOMERS, "r", "{\"id\":2}", "{\"id\":2,\"name\":\"Grace\",\"email\":null}"),
        ChangeRecord.expect(
            ORDERS,
            "r",
            "{\"id\":1}",
            "{\"id\":1,\"customer_id\":1,\"item\":\"notebook\",\"quantity\":2,\"status\":\"new\"}"));
  }

  /** The records of {@link #writeChanges}, in each topic's order. */
  static List<ChangeRecord> expectedChanges() {
    return List.of(
        ChangeRecord.expect(
            CUSTOMERS,
            "c",
            "{\"id\":3}",
            "{\"id\":3,\"name\":\"Edsger\",\"email\":\"ewd@example.com\"}"),
        ChangeRecord.expect(
            ORDERS,
            "c",
            "{\"id\":2}",
            "{\"id\":2,\"customer_id\":3,\"item\":\"pencil\",\"quantity\":10,\"status\":\"new\"}"),
        ChangeRecord.expect(
            ORDERS,
            "u",
            "{\"id\":1}",
            "{\"id\":1,\"customer_id\":1,\"item\":\"notebook\",\"quantity\":2,\"status\":\"shipped\"}"),
        ChangeRecord.expect(
            CUSTOMERS,
            "u",
            "{\"id\":2}",
            "{\"id\":2,\"name\":\"Grace\",\"email\":\"grace@example.com\"}"),
        ChangeRecord.expect(ORDERS, "d", "{\"id\":2}", null),
        ChangeRecord.expect(ORDERS, ChangeRecord.TOMBSTONE, "{\"id\":2}", null),
        ChangeRecord.expect(CUSTOMERS, "d", "{\"id\":3}", null),
        ChangeRecord.expect(CUSTOMERS, ChangeRecord.TOMBSTONE, "{\"id\":3}", null));
  }
}
