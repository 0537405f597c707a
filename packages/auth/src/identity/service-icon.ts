/**
 * The service's icon: its initial on a disc. The account page serves it (and uses it as its
 * favicon); MCP names it by URL as the icon of the server and of each tool, which costs a tool
 * list a few tokens where an inline `data:` image would cost about a hundred per tool.
 */
export const serviceIconPath = (service: string): string => `/account/${service}/icon.svg`;

export const serviceIconSvg = (service: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="12" fill="#2b6cb0"/><text x="12" y="17" font-family="sans-serif" font-size="14" text-anchor="middle" fill="#fff">${service.charAt(0).toUpperCase()}</text></svg>`;
