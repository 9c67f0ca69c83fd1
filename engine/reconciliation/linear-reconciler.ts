/**
 * What every method reduces to at one horizon step: a linear map from the base forecasts of
 * every row (structure order) to the reconciled bottoms. The aggregates are then the bottoms'
 * sums, so anything passed through the map, means or sample paths, comes out coherent.
 */
export interface LinearReconciler {
  /** Writes the reconciled bottoms of `y` (one value per row) at a horizon step into `out`. */
  bottoms(step: number, y: Float64Array, out: Float64Array): void;
  /**
   * Variance of every row's reconciled value when the base forecasts' errors have these
   * standard deviations (one per row), correlated as the method's weights say.
   */
  variances(step: number, sd: Float64Array): Float64Array;
  /** Draws base forecast errors (one per row) with the covariance `variances` assumes, from standard normal draws. */
  drawBaseErrors(sd: Float64Array, normal: () => number, out: Float64Array): void;
}
