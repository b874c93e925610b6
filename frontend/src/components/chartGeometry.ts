// One geometry for every strip of the explorer, so the lag chart, the parameter lanes, the
// verdict bands and the rate chart share one time axis pixel for pixel.
export const Y_AXIS_WIDTH = 64;
export const RIGHT_MARGIN = 16;
export const CHART_MARGIN = { top: 8, right: RIGHT_MARGIN, bottom: 0, left: 0 } as const;
