package io.datum.cdc.testkit;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.MemoryCheckpointStore;
import java.nio.file.Path;

/** The {@code memory:} store against the conformance kit; it keeps nothing past its process. */
class MemoryStoreConformanceTest extends CheckpointStoreConformanceKit {

  @Override
  protected CdcCheckpointStore open(Path directory) {
    return new MemoryCheckpointStore();
  }

  @Override
  protected String uri(Path directory) {
    return null;
  }

  @Override
  protected boolean outlivesClose() {
    return false;
  }
}
