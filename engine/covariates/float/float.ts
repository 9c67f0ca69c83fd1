import { z } from 'zod';
import { listed, type CovariateKind } from '../kind.ts';
import { floatCovariate } from './placement.ts';
import { describeFloatSource, listFloatSources, readFloatColumn, type FloatSeries } from './float-sources.ts';

/**
 * The `float` covariate: one numeric column of a data source registered in FLOAT_SOURCES_DIR
 * (float-sources.ts), placed on each series' steps (placement.ts). A float source is taken as known in
 * advance (plans, prices, weather forecasts), so its values run through the horizon.
 */

const FloatConfig = z.strictObject({ data_source: z.string().min(1), column: z.string().min(1).max(100) });

export const float: CovariateKind<'float', typeof FloatConfig> = {
  type: 'float',
  config: FloatConfig,
  resolve(config, { floatSourcesDir }) {
    const refuse = (field: 'data_source' | 'column', message: string) => ({ errors: [{ path: [field], message }] });
    const sources = listFloatSources(floatSourcesDir);
    const file = sources.get(config.data_source);
    if (!file) {
      return refuse(
        'data_source',
        sources.size === 0
          ? `unknown data source '${config.data_source}': no data sources are registered on this server`
          : `unknown data source '${config.data_source}'; registered data sources: ${listed(sources.keys())}`,
      );
    }
    let source;
    try {
      source = describeFloatSource(config.data_source, file);
    } catch (e) {
      // The reader's words name the file: the client hears the source's name instead.
      return refuse('data_source', `data source '${config.data_source}' cannot be read: ${(e as Error).message.replaceAll(file, config.data_source)}`);
    }
    if (!source.timeColumn) {
      const columns = source.columns.map((c) => `${c.name} ${c.type}`).join(', ');
      return refuse('data_source', `data source '${source.name}' has no date or timestamp column (columns: ${columns})`);
    }
    if (!source.numericColumns.includes(config.column)) {
      const found = source.columns.find((c) => c.name === config.column);
      const problem = found
        ? `column '${config.column}' of data source '${source.name}' is ${found.type}, which is no number column this server reads`
        : `data source '${source.name}' has no column '${config.column}'`;
      return refuse('column', `${problem}; numeric columns: ${listed(source.numericColumns) || 'none'}`);
    }
    let series: FloatSeries;
    try {
      series = readFloatColumn(source, config.column);
    } catch (e) {
      return refuse('data_source', `data source '${source.name}' cannot be read: ${(e as Error).message}`);
    }
    return { columns: [{ name: `float:${source.name}:${config.column}`, kind: 'future', build: (periods) => floatCovariate(series, periods) }] };
  },
};
