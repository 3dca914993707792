package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.CdcConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PgOutputCliOptionsTest {

  @Test
  void sizesAreBytesOrPowersOf1024() {
    assertEquals(1, PgOutputCliOptions.parseSize("1"));
    assertEquals(512 * 1024, PgOutputCliOptions.parseSize("512k"));
    assertEquals(64L << 20, PgOutputCliOptions.parseSize("64M"));
    assertEquals(2L << 30, PgOutputCliOptions.parseSize(" 2g "));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "k", "0", "-1", "1.5m", "12q", "99999999999g"})
  void badSizesNameTheOption(String size) {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> PgOutputCliOptions.parseSize(size));
    assertEquals(true, e.getMessage().startsWith("--memory-budget"), e.getMessage());
  }
}
