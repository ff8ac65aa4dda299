// Runs the Nest Swagger CLI plugin inside ts-jest, with the options of nest-cli.json, so the
// tested app serves the same OpenAPI document as the built one.
const plugin = require('@nestjs/swagger/plugin');
const nestCli = require('../../nest-cli.json');

const options = nestCli.compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger').options;

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 2;
module.exports.factory = (compiler) => plugin.before(options, compiler.program);
