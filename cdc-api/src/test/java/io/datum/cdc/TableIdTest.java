package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The one table-name syntax every input takes. */
class TableIdTest {

  @Test
  void schemaTableOrTableForPublicUnquotedPartsAsWritten() {
    assertEquals(new TableId("public", "orders"), TableId.parse("orders"));
    assertEquals(new TableId("sales", "orders"), TableId.parse("sales.orders"));
    assertEquals(new TableId("Sales", "Orders"), TableId.parse("Sales.Orders"));
    assertEquals(new TableId("public", "orders"), TableId.parse("  orders "));
  }

  @Test
  void quotedPartsAreTakenExactly() {
    assertEquals(new TableId("Sales", "Orders 2024"), TableId.parse("\"Sales\".\"Orders 2024\""));
    assertEquals(new TableId("public", "a.b"), TableId.parse("\"a.b\""));
    assertEquals(new TableId("s", "say \"hi\""), TableId.parse("s.\"say \"\"hi\"\"\""));
    assertEquals(new TableId("my.schema", "t"), TableId.parse("\"my.schema\".t"));
  }

  @Test
  void malformedNamesAreRefusedNamingTheText() {
    for (String bad :
        new String[] {"", ".t", "s.", "a.b.c", "\"open", "\"a\"b", "s.\"t\"x", "a\"b", "s..t"}) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> TableId.parse(bad), bad);
      assertTrue(e.getMessage().startsWith("table name \"" + bad + "\" is not"), e.getMessage());
    }
  }
}
