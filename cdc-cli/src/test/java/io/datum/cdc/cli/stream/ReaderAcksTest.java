package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.CdcConfigurationException;
import org.junit.jupiter.api.Test;

/** What {@code --acks-from} refuses before anything starts. */
class ReaderAcksTest {

  @Test
  void aFileDescriptorThisProcessDoesNotHaveIsRefusedWithTheWayToPassIt() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> ReaderAcks.check("fd:987654"));
    assertEquals(
        "--acks-from fd:987654: file descriptor 987654 is not open in this process; the process"
            + " that starts pgcdc must pass it (in a shell: pgcdc stream ... --acks-from fd:987654"
            + " 987654<acks), or use - for stdin",
        e.getMessage());
    ReaderAcks.check("fd:0"); // stdin is open
    ReaderAcks.check("-");
  }

  @Test
  void aNonNumericDescriptorIsRefused() {
    CdcConfigurationException e =
        assertThrows(CdcConfigurationException.class, () -> ReaderAcks.check("fd:x"));
    assertEquals("--acks-from fd:N needs a file descriptor number, was \"fd:x\"", e.getMessage());
  }
}
