package io.datum.cdc.store.rocksdb;

import io.datum.cdc.testkit.PackageCycles;
import org.junit.jupiter.api.Test;

/** No cycle between the packages of this module's main classes (issue #24). */
class PackageCyclesTest {

  @Test
  void noPackageCycle() {
    PackageCycles.assertNone(RocksDbCheckpointStore.class);
  }
}
