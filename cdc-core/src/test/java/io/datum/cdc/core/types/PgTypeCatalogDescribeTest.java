package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.PgType;
import io.datum.cdc.event.PgType.Kind;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PgTypeCatalog#describe} gives the kind, element, base type and modifier and enum labels of
 * user types (once per oid), and {@link PgTypeCatalog#columnFacts} the declared dimensions and
 * primary key positions.
 */
@EmbeddedPostgresTest
class PgTypeCatalogDescribeTest {

  private static int oid(EmbeddedPostgresServer pg, String type) throws SQLException {
    return Integer.parseInt(pg.queryString("SELECT '" + type + "'::regtype::oid"));
  }

  @Test
  void describesUserTypesOncePerOidAndNewOnesWhenAsked(EmbeddedPostgresServer pg)
      throws SQLException {
    pg.execute(
        "CREATE TYPE feeling AS ENUM ('x', 'y,z')",
        "CREATE DOMAIN cents AS numeric(10,2)",
        "CREATE DOMAIN cents2 AS cents",
        "CREATE TYPE spot AS (a int, b text)",
        "CREATE TYPE frange AS RANGE (subtype = float8)");
    PgTypeCatalog catalog = new PgTypeCatalog(pg::getConnection);

    PgType feeling = catalog.describe(oid(pg, "feeling"), null, null);
    assertEquals(Kind.ENUM, feeling.kind());
    assertEquals("public", feeling.schema());
    assertEquals("feeling", feeling.name());
    assertEquals(List.of("x", "y,z"), feeling.enumLabels());
    PgType feelings = catalog.describe(oid(pg, "_feeling"), null, null);
    assertEquals(Kind.ARRAY, feelings.kind());
    assertEquals("_feeling", feelings.name());
    assertEquals(feeling, feelings.element());

    PgType cents2 = catalog.describe(oid(pg, "cents2"), null, null);
    assertEquals(Kind.DOMAIN, cents2.kind());
    assertEquals(-1, cents2.baseModifier());
    PgType cents = cents2.base();
    assertEquals("cents", cents.name());
    assertEquals(((10 << 16) | 2) + 4, cents.baseModifier());
    assertSame(PgType.builtin(1700), cents.base());
    assertSame(PgType.builtin(1700), cents2.baseType());

    assertEquals(Kind.COMPOSITE, catalog.describe(oid(pg, "spot"), null, null).kind());
    assertEquals(Kind.RANGE, catalog.describe(oid(pg, "frange"), null, null).kind());
    assertEquals(Kind.MULTIRANGE, catalog.describe(oid(pg, "fmultirange"), null, null).kind());
    assertEquals(
        "pg_catalog.regclass", catalog.describe(2205, null, null).qualifiedName()); // not in table

    PgType gone = catalog.describe(999_999_999, "public", "dropped_type");
    assertEquals(Kind.UNKNOWN, gone.kind());
    assertEquals("public.dropped_type", gone.qualifiedName());

    long queries = catalog.queries();
    assertSame(feeling, catalog.describe(oid(pg, "feeling"), null, null));
    assertEquals(queries, catalog.queries());

    pg.execute("CREATE DOMAIN later AS varchar(12)");
    PgType later = catalog.describe(oid(pg, "later"), null, null);
    assertEquals(Kind.DOMAIN, later.kind());
    assertEquals(12 + 4, later.baseModifier());
    assertEquals(queries + 1, catalog.queries());
  }

  @Test
  void columnFactsGiveDimensionsAndPrimaryKeyPositions(EmbeddedPostgresServer pg)
      throws SQLException {
    pg.execute(
        "CREATE TABLE facts (note text, id int, grid int[][], region text,"
            + " PRIMARY KEY (region, id))",
        "CREATE TABLE nofacts (note text)",
        "CREATE PUBLICATION facts_pub FOR TABLE facts");
    PgTypeCatalog catalog = new PgTypeCatalog(pg::getConnection);
    try (Connection c = pg.getConnection()) {
      catalog.preload(c, "facts_pub");
    }
    long queries = catalog.queries();
    int table = Integer.parseInt(pg.queryString("SELECT 'facts'::regclass::oid"));
    Map<String, int[]> columns =
        catalog.columnFacts(table, List.of("note", "id", "grid", "region"), false);
    assertEquals(queries, catalog.queries()); // preloaded
    assertEquals(0, columns.get("note")[1]);
    assertEquals(2, columns.get("id")[1]);
    assertEquals(1, columns.get("region")[1]);
    assertEquals(2, columns.get("grid")[0]);
    assertEquals(0, columns.get("note")[0]);

    int other = Integer.parseInt(pg.queryString("SELECT 'nofacts'::regclass::oid"));
    assertEquals(0, catalog.columnFacts(other, List.of("note"), false).get("note")[1]);
    assertEquals(queries + 1, catalog.queries());
    assertNull(catalog.columnFacts(999_999_999, List.of("x"), false));
  }
}
