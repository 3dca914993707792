package io.datum.cdc.testkit;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.testkit.FlawedStore.Flaw;
import java.nio.file.Path;

/**
 * The conformance kit against {@link FlawedStore}, one subclass per flaw. {@link
 * ConformanceKitSelfTest} runs them through the JUnit launcher; surefire does not run them itself
 * (their names do not end in Test).
 */
final class FlawedStoreKits {

  private FlawedStoreKits() {}

  abstract static class Base extends CheckpointStoreConformanceKit {
    abstract Flaw flaw();

    @Override
    protected CdcCheckpointStore open(Path directory) {
      return FlawedStore.open(directory, flaw());
    }

    @Override
    protected String uri(Path directory) {
      return FlawedStore.uri(directory, flaw());
    }
  }

  static class None extends Base {
    @Override
    Flaw flaw() {
      return Flaw.NONE;
    }
  }

  static class AsyncStore extends Base {
    @Override
    Flaw flaw() {
      return Flaw.ASYNC_STORE;
    }
  }

  static class InPlaceWrite extends Base {
    @Override
    Flaw flaw() {
      return Flaw.IN_PLACE_WRITE;
    }
  }

  static class SplitFiles extends Base {
    @Override
    Flaw flaw() {
      return Flaw.SPLIT_FILES;
    }
  }

  static class NoLock extends Base {
    @Override
    Flaw flaw() {
      return Flaw.NO_LOCK;
    }
  }

  static class StaleLock extends Base {
    @Override
    Flaw flaw() {
      return Flaw.STALE_LOCK;
    }
  }

  static class LenientLoad extends Base {
    @Override
    Flaw flaw() {
      return Flaw.LENIENT_LOAD;
    }
  }

  static class StoreAfterClose extends Base {
    @Override
    Flaw flaw() {
      return Flaw.STORE_AFTER_CLOSE;
    }
  }

  static class UncheckedNames extends Base {
    @Override
    Flaw flaw() {
      return Flaw.UNCHECKED_NAMES;
    }
  }
}
