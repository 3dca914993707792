package io.datum.cdc.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.event.PgType.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Column metadata: builtin types without a catalog, and the typmod decodings. */
class ColumnInfoTest {

  private static ColumnInfo column(int oid, int typmod) {
    return new ColumnInfo("c", oid, typmod, false);
  }

  @Test
  void aColumnOfABuiltinTypeIsDescribedWithoutACatalog() {
    ColumnInfo c = column(1007, -1);
    assertEquals(Kind.ARRAY, c.type().kind());
    assertEquals("_int4", c.type().name());
    assertSame(PgType.builtin(23), c.type().element());
    assertEquals("pg_catalog.int4", c.type().element().qualifiedName());
    assertEquals(Kind.RANGE, PgType.builtin(3904).kind());
    assertEquals(Kind.UNKNOWN, column(50_000, -1).type().kind());
    assertEquals("oid 50000", column(50_000, -1).type().qualifiedName());
    assertEquals(0, c.arrayDimensions());
    assertEquals(-1, c.primaryKeyPosition());
  }

  @Test
  void typeModifiersDecodeAsPostgreSqlEncodesThem() {
    // numeric(10,2): ((10 << 16) | 2) + 4 (numeric.c make_numeric_typmod)
    ColumnInfo money = column(1700, ((10 << 16) | 2) + 4);
    assertEquals(10, money.precision());
    assertEquals(2, money.scale());
    // numeric(3,-2), PostgreSQL 15+: the scale is 11 bits, signed
    ColumnInfo negative = column(1700, ((3 << 16) | (-2 & 0x7ff)) + 4);
    assertEquals(3, negative.precision());
    assertEquals(-2, negative.scale());
    assertEquals(-1, column(1700, -1).precision());
    assertEquals(12, column(1043, 16).length()); // varchar(12): 12 + VARHDRSZ
    assertEquals(3, column(1042, 7).length()); // char(3)
    assertEquals(8, column(1560, 8).length()); // bit(8): the typmod itself
    assertEquals(-1, column(25, -1).length());
    assertEquals(3, column(1114, 3).fractionalSecondsPrecision()); // timestamp(3)
    assertEquals(0, column(1184, 0).fractionalSecondsPrecision());
    assertEquals(-1, column(1083, -1).fractionalSecondsPrecision());
    // interval(2): range bits INTERVAL_FULL_RANGE (0x7FFF) << 16 | 2 (timestamp.c intervaltypmodin)
    assertEquals(2, column(1186, (0x7fff << 16) | 2).fractionalSecondsPrecision());
    assertEquals(-1, column(1186, (0x7fff << 16) | 0xffff).fractionalSecondsPrecision());
    assertEquals(10, column(1231, ((10 << 16) | 2) + 4).precision()); // numeric(10,2)[]
    assertEquals(-1, column(23, 4).precision());
  }

  @Test
  void aDomainColumnWithoutModifierTakesTheDomains() {
    PgType cents =
        new PgType(
            20_000,
            "public",
            "cents",
            Kind.DOMAIN,
            null,
            PgType.builtin(1700),
            ((8 << 16) | 2) + 4,
            List.of());
    PgType outer = new PgType(20_001, "public", "outer", Kind.DOMAIN, null, cents, -1, List.of());
    ColumnInfo c = new ColumnInfo("c", 20_001, -1, false, outer, 0, 0);
    assertEquals(((8 << 16) | 2) + 4, c.effectiveTypeModifier());
    assertEquals(8, c.precision());
    assertEquals(2, c.scale());
    assertSame(PgType.builtin(1700), outer.baseType());
  }

  @Test
  void inconsistentMetadataIsRefused() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new ColumnInfo("c", 23, -1, false, PgType.builtin(25), 0, -1));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ColumnInfo("c", 23, -1, false, PgType.builtin(23), -1, -1));
    assertThrows(IllegalArgumentException.class, () -> PgType.of(1, "s", "n", Kind.ENUM));
    assertThrows(
        NullPointerException.class,
        () -> new PgType(1, "s", "n", Kind.ARRAY, null, null, -1, List.of()));
  }
}
