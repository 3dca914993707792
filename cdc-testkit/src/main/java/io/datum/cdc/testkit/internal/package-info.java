/**
 * Implementation classes of the test kit, such as the child process of the conformance kit's crash
 * tests; not API, may change in any release.
 */
package io.datum.cdc.testkit.internal;
