module.exports = require('@app/devstack/jest-preset.cjs')(__dirname);
