// The plotly.js bundle the app's first panels draw with (assets/plotly/plotly-2d.min.js):
// plotly.js's core (which brings scatter) and the other 2-D traces the figures use.
// A figure with any other trace loads the full plotly.js (assets/plotly/upgrade.js).
var Plotly = require("plotly.js/lib/core");

Plotly.register([require("plotly.js/lib/bar"), require("plotly.js/lib/heatmap")]);

module.exports = Plotly;
