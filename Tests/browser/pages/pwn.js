// Loaded only by the attribute-safety tests: proof that a refused binding would have run code.
window.top.pwned = 'pwn.js';
