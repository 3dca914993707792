package io.datum.cdc.core.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.datum.cdc.event.PgType;
import org.junit.jupiter.api.Test;

/** The decoders' table of builtin types and the API's descriptions of them agree. */
class PgBuiltinTypeTableTest {

  @Test
  void everyDecodedBuiltinTypeIsDescribedWithItsNameAndArray() {
    for (PgBuiltinType t : PgBuiltinType.values()) {
      PgType type = PgType.builtin(t.oid());
      assertEquals("pg_catalog", type.schema(), t.name());
      assertEquals(t.typname(), type.name(), t.name());
      assertEquals(
          t.typname().equals("unknown") ? PgType.Kind.PSEUDO : PgType.Kind.BASE, type.kind());
      if (t.arrayOid() != 0) {
        PgType array = PgType.builtin(t.arrayOid());
        assertEquals(PgType.Kind.ARRAY, array.kind(), t.name());
        assertEquals("_" + t.typname(), array.name());
        assertSame(type, array.element());
      }
    }
  }

  @Test
  void builtinRangesAreDescribedByTheNamesTheTypeMessagesUse() {
    for (String name :
        new String[] {"int4range", "numrange", "tsrange", "tstzrange", "daterange", "int8range"}) {
      int oid = PgBuiltinType.builtinOidNamed(name);
      assertEquals(PgType.Kind.RANGE, PgType.builtin(oid).kind(), name);
      assertEquals(name, PgType.builtin(oid).name());
      assertEquals(
          PgType.builtin(oid), PgType.builtin(PgBuiltinType.builtinOidNamed("_" + name)).element());
    }
    assertEquals(PgType.Kind.MULTIRANGE, PgType.builtin(4451).kind());
    assertEquals(PgType.Kind.UNKNOWN, PgType.builtin(2205).kind()); // regclass: from the catalog
  }
}
