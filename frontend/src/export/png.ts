// A part of the page as a PNG picture, as the page shows it (its theme included): html-to-image
// copies each element with its computed style — the theme's custom properties resolved to
// colours — into an SVG and draws that on a canvas. Loaded on the first export only, so no page
// carries it until someone exports. Elements marked data-export="skip" (the export buttons,
// a form) are left out of the picture.
const SKIP = '[data-export="skip"]';

/** The colour behind `node`: its own background, else the first opaque one up the page. */
function backdrop(node: HTMLElement): string {
  for (let el: HTMLElement | null = node; el; el = el.parentElement) {
    const color = getComputedStyle(el).backgroundColor;
    if (color && color !== "transparent" && !/rgba\(.*,\s*0\)$/.test(color)) return color;
  }
  return getComputedStyle(document.documentElement).backgroundColor || "#ffffff";
}

// A margin of the backdrop around the picture, so a panel's border or a page's first letters do
// not touch the image's edge: the element keeps its size, the canvas grows around it.
const MARGIN_PX = 16;

async function options(node: HTMLElement) {
  const { width, height } = node.getBoundingClientRect();
  return {
    backgroundColor: backdrop(node),
    width: Math.ceil(width) + 2 * MARGIN_PX,
    height: Math.ceil(height) + 2 * MARGIN_PX,
    style: { margin: `${MARGIN_PX}px`, width: `${Math.ceil(width)}px`, height: `${Math.ceil(height)}px` },
    // Sharp on a high-density screen and when zoomed in a document; html-to-image scales a
    // canvas down that would pass the browsers' size limit.
    pixelRatio: Math.max(2, window.devicePixelRatio || 1),
    // The app uses the system's fonts: nothing to embed, and reading every style sheet's
    // @font-face would only cost time.
    skipFonts: true,
    filter: (el: HTMLElement) => !(el instanceof Element && el.matches(SKIP)),
  };
}

/** The picture as a data: URL (to embed in a report). */
export async function elementPngDataUrl(node: HTMLElement): Promise<string> {
  const { toPng } = await import("html-to-image");
  return toPng(node, await options(node));
}

/** The picture as a file's content (to download). */
export async function elementPngBlob(node: HTMLElement): Promise<Blob> {
  const { toBlob } = await import("html-to-image");
  const blob = await toBlob(node, await options(node));
  if (!blob) throw new Error("the browser could not make the picture");
  return blob;
}
