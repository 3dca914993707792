package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SlotNamesTest {

  private static final String RULE =
      ": PostgreSQL slot names are 1 to 63 characters of a-z, 0-9 and _";

  @Test
  void maxLengthIs63() {
    assertEquals(63, SlotNames.MAX_LENGTH);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a",
        "s",
        "_",
        "0",
        "9",
        "z",
        "slot",
        "my_slot_1",
        "0123456789",
        "abcdefghijklmnopqrstuvwxyz",
        "___",
        "1slot"
      })
  void validNames(String name) {
    assertTrue(SlotNames.isValid(name));
    assertSame(name, SlotNames.requireValid(name));
  }

  @Test
  void sixtyThreeCharactersIsValid() {
    String name = "a".repeat(63);
    assertTrue(SlotNames.isValid(name));
    assertSame(name, SlotNames.requireValid(name));
  }

  @Test
  void sixtyFourCharactersIsInvalid() {
    String name = "a".repeat(64);
    assertFalse(SlotNames.isValid(name));
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> SlotNames.requireValid(name));
    assertEquals("invalid replication slot name \"" + name + "\"" + RULE, e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "Slot",
        "SLOT",
        "slotA",
        "my-slot",
        "my.slot",
        "my/slot",
        "../etc",
        "my slot",
        " slot",
        "slot\n",
        "sl\u0000ot",
        "caf\u00e9", // é
        "\uFF53lot", // fullwidth s
        "\u0131", // dotless i
        "slot\uD83D\uDE00", // emoji (surrogate pair)
        "a$b",
        "a:b",
        "a\\b"
      })
  void invalidNames(String name) {
    assertFalse(SlotNames.isValid(name));
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> SlotNames.requireValid(name));
    assertEquals("invalid replication slot name \"" + name + "\"" + RULE, e.getMessage());
  }

  @Test
  void nullIsInvalid() {
    assertFalse(SlotNames.isValid(null));
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> SlotNames.requireValid(null));
    assertEquals("invalid replication slot name null" + RULE, e.getMessage());
  }
}
