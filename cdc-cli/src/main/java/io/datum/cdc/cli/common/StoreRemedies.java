package io.datum.cdc.cli.common;

import io.datum.cdc.CdcStoreException;

/** What to do about a store failure, added to the message where the store does not say it. */
public final class StoreRemedies {

  private StoreRemedies() {}

  /**
   * Adds the remedy to a corrupt-checkpoint failure (a message starting {@code corrupt checkpoint}
   * from the checkpoint codec); returns any other failure unchanged.
   *
   * @param e the failure
   * @param storeUri the store URI as given
   * @param slot the slot whose checkpoint was read
   * @return the failure to throw
   */
  public static CdcStoreException withRemedy(CdcStoreException e, String storeUri, String slot) {
    if (e.getMessage() == null || !e.getMessage().startsWith("corrupt checkpoint")) {
      return e;
    }
    return new CdcStoreException(
        e.getMessage()
            + ". Restore it from a backup, or delete it (pgcdc checkpoint delete --store "
            + storeUri
            + " --slot "
            + slot
            + " --yes): the slot then resumes from its own confirmed position and no change is"
            + " lost, but events acknowledged after that position come again",
        e);
  }
}
